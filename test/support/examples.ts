import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseManifests, type ManifestDocument } from '../../src/manifests/load.js';

export const REPO_ROOT = new URL('../../', import.meta.url).pathname;

function walk(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return /\.(ya?ml|json)$/.test(name) ? [path] : [];
  });
}

export interface ExampleFile {
  /** Path relative to the repository root, for readable test names. */
  readonly path: string;
  readonly text: string;
  readonly documents: ManifestDocument[];
  /** From the `# rule:` header line of an invalid example. */
  readonly rule?: string;
  /** From the `# expect-field:` header line of an invalid example. */
  readonly expectField?: string;
}

function header(text: string, name: string): string | undefined {
  const match = new RegExp(`^#\\s*${name}:\\s*(.+?)\\s*$`, 'm').exec(text);
  return match?.[1];
}

export function loadExamples(which: 'valid' | 'invalid'): ExampleFile[] {
  return walk(join(REPO_ROOT, 'examples', which)).map((file) => {
    const text = readFileSync(file, 'utf8');
    const rule = header(text, 'rule');
    const expectField = header(text, 'expect-field');
    return {
      path: relative(REPO_ROOT, file),
      text,
      documents: parseManifests(file, text),
      ...(rule === undefined ? {} : { rule }),
      ...(expectField === undefined ? {} : { expectField }),
    };
  });
}
