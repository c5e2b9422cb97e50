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
  /**
   * From the `# cluster:` header line: what a cluster does with an invalid example that only
   * `endpoint-operator validate --strict` refuses. Absent: the apiserver refuses it (schema or webhook).
   * - `accepted-with-warning`: the apiserver prunes the field; the webhook's warning names it;
   * - `accepted`: a manifest-set finding (objects apply in any order; status reports it);
   * - `unsendable`: kubectl cannot send the manifest as written.
   */
  readonly cluster?: 'accepted-with-warning' | 'accepted' | 'unsendable';
}

const CLUSTER_OUTCOMES = ['accepted-with-warning', 'accepted', 'unsendable'] as const;

function header(text: string, name: string): string | undefined {
  const match = new RegExp(`^#\\s*${name}:\\s*(.+?)\\s*$`, 'm').exec(text);
  return match?.[1];
}

export function loadExamples(which: 'valid' | 'invalid'): ExampleFile[] {
  return walk(join(REPO_ROOT, 'examples', which)).map((file) => {
    const text = readFileSync(file, 'utf8');
    const rule = header(text, 'rule');
    const expectField = header(text, 'expect-field');
    const clusterWord = header(text, 'cluster')?.split(/\s/)[0];
    const cluster = CLUSTER_OUTCOMES.find((c) => c === clusterWord);
    if (clusterWord !== undefined && cluster === undefined)
      throw new Error(`${file}: unknown "# cluster:" outcome ${clusterWord}`);
    return {
      path: relative(REPO_ROOT, file),
      text,
      documents: parseManifests(file, text),
      ...(rule === undefined ? {} : { rule }),
      ...(expectField === undefined ? {} : { expectField }),
      ...(cluster === undefined ? {} : { cluster }),
    };
  });
}
