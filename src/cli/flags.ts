import { parseArgs } from 'node:util';
import { checkServerLimits, type ServerLimits } from '../http/server-limits.js';

/**
 * Table-driven flags with environment-variable fallbacks: a flag beats its variable, which
 * beats the default, so a Deployment can set everything through `env:` and a person can
 * override one setting on the command line. The same table renders `--help`.
 */
export interface FlagSpec {
  readonly name: string;
  readonly type: 'string' | 'number' | 'boolean' | 'list';
  readonly env?: string;
  readonly default?: string | number | boolean | readonly string[];
  readonly help: string;
  readonly placeholder?: string;
}

export type FlagValues = Record<string, string | number | boolean | string[] | undefined>;

export class UsageError extends Error {}

function parseBoolean(name: string, raw: string): boolean {
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new UsageError(`--${name}: expected true or false, got "${raw}"`);
}

function parseNumber(name: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${name}: expected a number, got "${raw}"`);
  return n;
}

function fromText(spec: FlagSpec, raw: string): string | number | boolean | string[] {
  switch (spec.type) {
    case 'boolean':
      return parseBoolean(spec.name, raw);
    case 'number':
      return parseNumber(spec.name, raw);
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
    default:
      return raw;
  }
}

/** Parses argv against the table; booleans accept `--x`, `--x=false` and `--no-x`. */
export function parseFlags(
  specs: readonly FlagSpec[],
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): FlagValues {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = { help: { type: 'boolean' } };
  for (const s of specs) {
    options[s.name] = { type: 'string', ...(s.type === 'list' ? { multiple: true } : {}) };
    if (s.type === 'boolean') options[`no-${s.name}`] = { type: 'boolean' };
  }
  // `--flag` alone for a boolean: rewrite to `--flag=true` so every flag can be typed as a string.
  const booleans = new Set(specs.filter((s) => s.type === 'boolean').map((s) => `--${s.name}`));
  const args = argv.map((a) => (booleans.has(a) ? `${a}=true` : a));
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const out: FlagValues = { help: values.help === true };
  for (const s of specs) {
    const given = values[s.name];
    if (s.type === 'boolean' && values[`no-${s.name}`] === true) out[s.name] = false;
    else if (Array.isArray(given)) out[s.name] = given.flatMap((g) => fromText(s, String(g)) as string[]);
    else if (typeof given === 'string') out[s.name] = fromText(s, given);
    else if (s.env !== undefined && env[s.env] !== undefined && env[s.env] !== '')
      out[s.name] = fromText(s, env[s.env] as string);
    else
      out[s.name] = Array.isArray(s.default)
        ? [...(s.default as string[])]
        : (s.default as string | number | boolean | undefined);
  }
  return out;
}

export function renderFlags(specs: readonly FlagSpec[]): string {
  const rows = specs.map((s) => {
    const left = `--${s.name}${s.type === 'boolean' ? '' : ` ${s.placeholder ?? s.type.toUpperCase()}`}`;
    const extra = [
      s.default !== undefined && !(Array.isArray(s.default) && s.default.length === 0)
        ? `default ${Array.isArray(s.default) ? s.default.join(',') : String(s.default)}`
        : undefined,
      s.env ? `env ${s.env}` : undefined,
    ].filter(Boolean);
    return [left, `${s.help}${extra.length > 0 ? ` (${extra.join('; ')})` : ''}`] as const;
  });
  const width = Math.min(34, Math.max(...rows.map(([l]) => l.length)));
  return rows
    .map(([l, r]) => (l.length > width ? `  ${l}\n  ${''.padEnd(width)}  ${r}` : `  ${l.padEnd(width)}  ${r}`))
    .join('\n');
}

export function str(values: FlagValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === 'string' ? v : undefined;
}

export function num(values: FlagValues, name: string): number {
  const v = values[name];
  if (typeof v !== 'number') throw new UsageError(`--${name} is required`);
  return v;
}

export function bool(values: FlagValues, name: string): boolean {
  return values[name] === true;
}

export function list(values: FlagValues, name: string): string[] {
  const v = values[name];
  return Array.isArray(v) ? v : [];
}

export function wholePositive(values: FlagValues, name: string): number {
  const v = num(values, name);
  if (!Number.isInteger(v) || v < 1) throw new UsageError(`--${name} must be a whole number of at least 1, got ${v}`);
  return v;
}

/**
 * `--{prefix}headers-timeout`, `request-timeout`, `keep-alive-timeout` (seconds) and
 * `max-connections` as a port's ServerLimits (src/http/server-limits.ts).
 */
export function serverLimitsOf(values: FlagValues, prefix: string): ServerLimits {
  const ms = (name: string): number => {
    const v = num(values, `${prefix}${name}`);
    if (!(v > 0) || !Number.isFinite(v))
      throw new UsageError(`--${prefix}${name} must be a positive number of seconds, got ${v}`);
    return Math.round(v * 1000);
  };
  const limits: ServerLimits = {
    headersTimeoutMs: ms('headers-timeout'),
    requestTimeoutMs: ms('request-timeout'),
    keepAliveTimeoutMs: ms('keep-alive-timeout'),
    maxConnections: wholePositive(values, `${prefix}max-connections`),
  };
  const problem = checkServerLimits(limits);
  if (problem !== undefined) throw new UsageError(`--${prefix}headers-timeout/--${prefix}request-timeout: ${problem}`);
  return limits;
}
