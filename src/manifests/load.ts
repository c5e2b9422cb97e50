import { readFile, readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import yaml from 'js-yaml';
import { MAX_MANIFEST_DEPTH, valueDepth, yamlDepthProblem } from './depth.js';

/** One document of a manifest file, with where it came from. */
export interface ManifestDocument {
  readonly file: string;
  /** 0-based position of the document in its file (after expanding `kind: List`). */
  readonly index: number;
  readonly object: unknown;
}

/** Input that could not be read at all: a missing file, a YAML syntax error. */
export class ManifestReadError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'ManifestReadError';
  }
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** Expands directories (recursively, manifest extensions only, sorted for stable output) into files. */
export async function expandPaths(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    if (path === '-') {
      files.push(path);
      continue;
    }
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      throw new ManifestReadError(path, describeFsError(err));
    }
    if (info.isDirectory()) {
      const entries = (await readdir(path, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      const nested = entries
        .filter((e) => e.isDirectory() || MANIFEST_EXTENSIONS.has(extname(e.name)))
        .map((e) => join(path, e.name));
      files.push(...(await expandPaths(nested)));
    } else {
      files.push(path);
    }
  }
  return files;
}

function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return (err as Error).message;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function readSource(file: string): Promise<string> {
  if (file === '-') return readStdin();
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new ManifestReadError(file, describeFsError(err));
  }
}

/**
 * Parses a multi-document YAML (or JSON) stream. Empty documents are dropped, as kubectl does;
 * a `kind: List` is expanded into its items. A syntax error names the file and line.
 */
export function parseManifests(file: string, text: string): ManifestDocument[] {
  const tooDeep = yamlDepthProblem(text);
  if (tooDeep !== undefined)
    throw new ManifestReadError(
      file,
      `nested more than ${MAX_MANIFEST_DEPTH} levels deep at line ${tooDeep.line}; the limit is ${MAX_MANIFEST_DEPTH} nested mappings, sequences and brackets`,
    );
  let docs: unknown[];
  try {
    // CORE_SCHEMA: YAML 1.2 scalars, and dates stay strings (the apiserver stores RFC 3339 strings).
    docs = yaml.loadAll(text, undefined, { schema: yaml.CORE_SCHEMA, filename: file });
  } catch (err) {
    if (err instanceof yaml.YAMLException) {
      const mark = err.mark as { line?: number; column?: number } | undefined;
      const where = mark?.line === undefined ? '' : ` at line ${mark.line + 1}, column ${(mark.column ?? 0) + 1}`;
      throw new ManifestReadError(file, `invalid YAML${where}: ${err.reason}`);
    }
    if (err instanceof RangeError) throw new ManifestReadError(file, 'document is nested too deeply to parse');
    throw new ManifestReadError(file, `cannot parse: ${(err as Error).message}`);
  }
  const out: ManifestDocument[] = [];
  for (const [i, doc] of docs.entries()) {
    if (doc === null || doc === undefined) continue;
    // Aliases can nest what the text does not (each anchor holding the previous one): measured once parsed.
    if (valueDepth(doc) > MAX_MANIFEST_DEPTH)
      throw new ManifestReadError(
        file,
        `document ${i + 1} is nested more than ${MAX_MANIFEST_DEPTH} levels deep (through YAML aliases); the limit is ${MAX_MANIFEST_DEPTH}`,
      );
    if (isList(doc)) for (const item of doc.items) out.push({ file, index: out.length, object: item });
    else out.push({ file, index: out.length, object: doc });
  }
  return out;
}

function isList(doc: unknown): doc is { items: unknown[] } {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  const d = doc as Record<string, unknown>;
  return (
    typeof d.kind === 'string' &&
    d.kind.endsWith('List') &&
    Array.isArray(d.items) &&
    (d.apiVersion === 'v1' || d.kind === 'List')
  );
}
