import { parseArgs } from 'node:util';
import { boundedJson, nonFiniteText, renderValue, type FieldError } from '../api/common/field-error.js';
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { codePointLength, printable, truncateText } from '../api/common/text.js';

export { printable };
import { checkManifestSet, type SetMember } from '../api/manifest-set.js';
import { validateObject, type ObjectValidationOptions, type ObjectVerdict } from '../api/validate-object.js';
import { ManifestReadError, expandPaths, parseManifests, readSource } from '../manifests/load.js';

const HELP = `Usage: endpoint-operator validate -f PATH [-f PATH...] [-o text|json] [--strict] [--no-set-checks]

Validates manifests offline with the same rules as the admission webhook and the reconciler.
PATH is a file, a directory (searched recursively for .yaml, .yml and .json) or - for stdin.
Objects of other kinds are reported as skipped.

The files are also checked as one manifest set (what a GitOps tool applies together): a
trafficSplit key that no DeployedModel in the set deploys, a DeployedModel whose endpointRef
names no PredictionEndpoint in the set, a RegistryEndpoint whose parent RegistryService is not in
the set, two RegistryServices with one spec.name, two DeployedModels with one id on an endpoint.

Flags:
  -f, --filename PATH       a file, directory or - (repeatable; bare arguments are taken as paths too)
  -o, --output FORMAT       text (default) or json
      --strict              refuse (instead of warn about) fields a version does not have, which the
                            apiserver would drop, and the findings of the manifest-set checks
      --no-set-checks       the files are part of a set: skip the manifest-set checks
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
  // JSON has no .inf or .nan: show them as the YAML that holds them, not as null.
  if (typeof value === 'number' && !Number.isFinite(value)) return nonFiniteText(value);
  if (typeof value === 'string' && value.length > MAX_JSON_STRING) {
    // Cut between code points; astral characters count two UTF-16 units, so halve the budget for them.
    let shown = truncateText(value, MAX_JSON_STRING);
    if (shown.length > MAX_JSON_STRING + 1) shown = truncateText(value, MAX_JSON_STRING / 2);
    if (shown !== value) return `${shown} (${codePointLength(value)} characters)`;
  }
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
    errors: v.errors.map(toJsonError),
    warnings: [...v.warnings],
  };
}

function errorLine(e: FieldError): string {
  const field = e.field === '' ? '(document)' : printable(e.field);
  return e.value === undefined
    ? `  ${field}: ${printable(e.detail)}`
    : `  ${field}: ${printable(e.detail)} (${printable(renderValue(e.value))})`;
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
  strict: boolean;
  setChecks: boolean;
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
        strict: { type: 'boolean', default: false },
        'no-set-checks': { type: 'boolean', default: false },
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
  if (values.output !== 'text' && values.output !== 'json')
    return `unsupported output format "${values.output}": use text or json`;
  return {
    paths,
    output: values.output,
    reservedPrefixes: values['reserved-prefix'] ?? [...DEFAULT_RESERVED_PREFIXES],
    strict: values.strict === true,
    setChecks: values['no-set-checks'] !== true,
  };
}

/** A validated document: its report entry, the object (for the set checks) and its errors. */
interface Checked {
  entry: ValidateReportEntry;
  object: unknown;
  errors: FieldError[];
}

/** Adds the manifest-set findings to the entries they are about: errors under --strict, else warnings. */
function applySetChecks(checked: Checked[], strict: boolean): void {
  const byPlace = new Map(checked.map((c) => [`${c.entry.file}\n${c.entry.document}`, c]));
  const members: SetMember[] = checked
    .filter((c) => !c.entry.skipped)
    .map((c) => ({ file: c.entry.file, document: c.entry.document, object: c.object }));
  for (const finding of checkManifestSet(members)) {
    const c = byPlace.get(`${finding.subject.file}\n${finding.subject.document}`);
    if (c === undefined) continue;
    if (strict) {
      c.errors.push(finding.error);
      c.entry.errors.push(toJsonError(finding.error));
      c.entry.valid = false;
    } else {
      c.entry.warnings.push(`${finding.error.field}: ${finding.error.detail}`);
    }
  }
}

function toJsonError(e: FieldError): ValidateReportEntry['errors'][number] {
  return { field: e.field, type: e.type, value: jsonValue(e.value), detail: e.detail };
}

function textLines(c: Checked): string[] {
  const { entry } = c;
  const lines: string[] = [];
  if (entry.skipped) lines.push(`${describe(entry)}: skipped (not an endpoint-operator kind)`);
  else if (entry.valid) lines.push(`${describe(entry)}: ok`);
  else lines.push(`${location(entry)}: ${describe(entry)}: invalid`);
  for (const e of c.errors) lines.push(errorLine(e));
  // A warning about a valid object still needs its place, for a pipeline log over many files.
  for (const w of entry.warnings)
    lines.push(`  warning: ${entry.valid && !entry.skipped ? `${location(entry)}: ` : ''}${printable(w)}`);
  return lines;
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
  const options: ObjectValidationOptions = { reservedPrefixes: args.reservedPrefixes, strict: args.strict };
  const checked: Checked[] = [];
  const readErrors: string[] = [];
  let files: string[] = [];
  try {
    files = await expandPaths(args.paths);
  } catch (err) {
    if (!(err instanceof ManifestReadError)) throw err;
    readErrors.push(err.message);
  }
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
      checked.push({ entry: toEntry(doc.file, doc.index, verdict), object: doc.object, errors: [...verdict.errors] });
    }
  }
  if (args.setChecks) applySetChecks(checked, args.strict);
  const entries = checked.map((c) => c.entry);
  if (args.output === 'json') process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
  else if (checked.length > 0) process.stdout.write(`${checked.flatMap(textLines).join('\n')}\n`);
  for (const message of readErrors) console.error(`error: ${message}`);
  if (args.output === 'text') {
    const invalid = entries.filter((e) => !e.valid).length;
    const skipped = entries.filter((e) => e.skipped).length;
    console.error(
      `${entries.length} object(s): ${entries.length - invalid - skipped} valid, ${invalid} invalid, ${skipped} skipped`,
    );
  }
  if (readErrors.length > 0) return 2;
  return entries.some((e) => !e.valid) ? 1 : 0;
}
