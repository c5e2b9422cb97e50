import { parseArgs } from 'node:util';
import { boundedJson, renderValue, type FieldError } from '../api/common/field-error.js';
import { DEFAULT_RESERVED_PREFIXES, type ValidationOptions } from '../api/common/kind.js';
import { validateObject, type ObjectVerdict } from '../api/validate-object.js';
import { ManifestReadError, expandPaths, parseManifests, readSource } from '../manifests/load.js';

const HELP = `Usage: endpoint-operator validate -f PATH [-f PATH...] [-o text|json]

Validates manifests offline with the same rules as the admission webhook and the reconciler.
PATH is a file, a directory (searched recursively for .yaml, .yml and .json) or - for stdin.
Objects of other kinds are reported as skipped.

Flags:
  -f, --filename PATH       a file, directory or - (repeatable; bare arguments are taken as paths too)
  -o, --output FORMAT       text (default) or json
      --reserved-prefix P   an annotation prefix the operator ignores (repeatable; default:
                            ${DEFAULT_RESERVED_PREFIXES.join(', ')})
  -h, --help                show this help

Exit status: 0 every object is valid, 1 an object is invalid, 2 unreadable input or bad usage.`;

/** One entry of `-o json`: the machine-readable contract for pipelines. */
export interface ValidateReportEntry {
  file: string;
  /** 1-based position of the object in its file (after expanding `kind: List`). */
  document: number;
  kind: string | null;
  apiVersion: string | null;
  namespace: string | null;
  name: string | null;
  valid: boolean;
  skipped: boolean;
  errors: { field: string; type: string; value: unknown; detail: string }[];
  warnings: string[];
}

const MAX_JSON_STRING = 1024;

/** Keeps `value` usable in JSON output without echoing megabytes back. */
function jsonValue(value: unknown): unknown {
  if (typeof value === 'string' && value.length > MAX_JSON_STRING) return `${value.slice(0, MAX_JSON_STRING)}...(${value.length} chars)`;
  if (typeof value === 'object' && value !== null) {
    // Echo a small object as is; a large one (or a YAML alias bomb) as the start of its JSON text.
    const { text, truncated } = boundedJson(value, MAX_JSON_STRING);
    return truncated ? `${text}...(truncated)` : value;
  }
  return value;
}

function toEntry(file: string, index: number, v: ObjectVerdict): ValidateReportEntry {
  return {
    file,
    document: index + 1,
    kind: v.kind ?? null,
    apiVersion: v.apiVersion ?? null,
    namespace: v.namespace ?? null,
    name: v.name ?? null,
    valid: v.outcome !== 'invalid',
    skipped: v.outcome === 'skipped',
    errors: v.errors.map((e) => ({ field: e.field, type: e.type, value: jsonValue(e.value), detail: e.detail })),
    warnings: v.warnings,
  };
}

// C0 and C1 controls and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from a manifest (a name, a map key in a field path) with control characters escaped, so that one
 * report line stays one line: a name holding "\nKind ns/other: ok" must not forge a line of the report.
 */
export function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function errorLine(e: FieldError): string {
  const field = e.field === '' ? '(document)' : printable(e.field);
  return e.value === undefined ? `  ${field}: ${printable(e.detail)}` : `  ${field}: ${printable(e.detail)} (${printable(renderValue(e.value))})`;
}

function describe(entry: ValidateReportEntry): string {
  const kind = printable(entry.kind ?? 'object');
  const name = printable(entry.name ?? `#${entry.document} in ${entry.file}`);
  return entry.namespace ? `${kind} ${printable(entry.namespace)}/${name}` : `${kind} ${name}`;
}

/** Where an invalid object is, so a pipeline log over many files points at the document to fix. */
function location(entry: ValidateReportEntry): string {
  return `${printable(entry.file)} (document ${entry.document})`;
}

interface Args {
  paths: string[];
  output: 'text' | 'json';
  reservedPrefixes: string[];
}

function parse(argv: string[]): Args | 'help' | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        output: { type: 'string', short: 'o', default: 'text' },
        'reserved-prefix': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return (err as Error).message;
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const paths = [...(values.filename ?? []), ...positionals];
  if (paths.length === 0) return 'no input: pass -f PATH (a file, a directory, or - for stdin)';
  if (values.output !== 'text' && values.output !== 'json') return `unsupported output format "${values.output}": use text or json`;
  return { paths, output: values.output, reservedPrefixes: values['reserved-prefix'] ?? [...DEFAULT_RESERVED_PREFIXES] };
}

export async function main(argv: string[]): Promise<number> {
  const args = parse(argv);
  if (args === 'help') {
    console.log(HELP);
    return 0;
  }
  if (typeof args === 'string') {
    console.error(`endpoint-operator validate: ${args}\n\n${HELP}`);
    return 2;
  }
  const options: ValidationOptions = { reservedPrefixes: args.reservedPrefixes };
  const entries: ValidateReportEntry[] = [];
  const readErrors: string[] = [];
  let files: string[] = [];
  try {
    files = await expandPaths(args.paths);
  } catch (err) {
    if (!(err instanceof ManifestReadError)) throw err;
    readErrors.push(err.message);
  }
  const out: string[] = [];
  for (const file of files) {
    let docs;
    try {
      docs = parseManifests(file === '-' ? '<stdin>' : file, await readSource(file));
    } catch (err) {
      if (!(err instanceof ManifestReadError)) throw err;
      readErrors.push(err.message);
      continue;
    }
    for (const doc of docs) {
      const verdict = validateObject(doc.object, undefined, options);
      const entry = toEntry(doc.file, doc.index, verdict);
      entries.push(entry);
      if (args.output === 'text') {
        if (entry.skipped) out.push(`${describe(entry)}: skipped (not an endpoint-operator kind)`);
        else if (entry.valid) out.push(`${describe(entry)}: ok`);
        else out.push(`${location(entry)}: ${describe(entry)}: invalid`);
        for (const e of verdict.errors) out.push(errorLine(e));
        for (const w of entry.warnings) out.push(`  warning: ${printable(w)}`);
      }
    }
  }
  if (args.output === 'json') process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
  else if (out.length > 0) process.stdout.write(`${out.join('\n')}\n`);
  for (const message of readErrors) console.error(`error: ${message}`);
  if (args.output === 'text') {
    const invalid = entries.filter((e) => !e.valid).length;
    const skipped = entries.filter((e) => e.skipped).length;
    console.error(`${entries.length} object(s): ${entries.length - invalid - skipped} valid, ${invalid} invalid, ${skipped} skipped`);
  }
  if (readErrors.length > 0) return 2;
  return entries.some((e) => !e.valid) ? 1 : 0;
}
