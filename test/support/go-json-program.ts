/**
 * The tests' small Go programs on an ecosystem library (tools/kstatus, tools/flux-health): each reads one JSON
 * document on stdin and writes one on stdout. Built on first use and cached (dev/cluster/go-build.ts).
 */
import { spawn } from 'node:child_process';
import { ensureGoBuild, type GoModuleBuild } from '../../dev/cluster/go-build.js';

/** Runs `build`'s one binary with `input` as JSON on stdin; resolves to its JSON output, rejects with its stderr. */
export async function runGoJsonProgram(build: GoModuleBuild, input: unknown): Promise<unknown> {
  const name = build.binaries[0] ?? build.module;
  const binary = (await ensureGoBuild(build))[name] ?? name;
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(JSON.parse(stdout) as unknown)
        : reject(new Error(`${name} exited ${String(code)}: ${stderr.trim()}`)),
    );
    child.stdin.end(JSON.stringify(input));
  });
}
