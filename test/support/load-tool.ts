/**
 * Runs a load tool (ghz, h2load) once from inside the real node's network namespace, where a Service's cluster IP
 * answers (dev/cluster/real-node/node-network.ts), and reads the CPU the tool itself used: on this machine the tool
 * shares the cores with the gateway and the model servers, so what it costs a call is part of what the gateway's
 * figures were measured under. The tool runs under `sh`, whose `times` (POSIX) prints, once the tool has exited,
 * the user and system time of the children it waited for: the kernel's account, to the tick.
 */
import { execFile } from 'node:child_process';
import { inNodeNetwork } from '../../dev/cluster/real-node/node-network.js';

export interface ToolRun {
  readonly stdout: string;
  readonly stderr: string;
  /** The tool's user + system CPU time, seconds. */
  readonly cpuSeconds: number;
}

/** `times`' second line: the children's user and system time, `0m1.140000s 0m0.200000s`. */
const TIMES = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/;

/** The children's CPU seconds from what `times` printed last, and the text before its two lines. */
export function splitTimes(stderr: string): { before: string; cpuSeconds: number } {
  const lines = stderr.trimEnd().split('\n');
  const children = TIMES.exec(lines.at(-1) ?? '');
  if (children === null || lines.length < 2) throw new Error(`the shell printed no times:\n${stderr}`);
  const [, um = '0', us = '0', sm = '0', ss = '0'] = children;
  return {
    before: lines.slice(0, -2).join('\n'),
    cpuSeconds: Number(um) * 60 + Number(us) + Number(sm) * 60 + Number(ss),
  };
}

/** Rejects when the tool exits other than 0, with what it printed. */
export function runLoadTool(tool: string, args: readonly string[], maxBuffer: number): Promise<ToolRun> {
  const [cmd, full] = inNodeNetwork(tool, args);
  const script = '"$@"; rc=$?; times >&2; exit $rc';
  return new Promise((resolve, reject) =>
    execFile('sh', ['-c', script, 'load-tool', cmd, ...full], { maxBuffer, timeout: 300_000 }, (error, out, err) => {
      if (error !== null) {
        reject(new Error(`${tool} ${args.join(' ')}: ${error.message}\n${out}\n${err}`));
        return;
      }
      try {
        const { before, cpuSeconds } = splitTimes(err);
        resolve({ stdout: out, stderr: before, cpuSeconds });
      } catch (parse) {
        reject(parse as Error);
      }
    }),
  );
}
