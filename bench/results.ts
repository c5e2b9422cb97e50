/**
 * Structured benchmark results. Every bench process records its figures with recordResults();
 * bench/run.ts gives each process a file (BENCH_RESULT_FILE) to write them to and merges the files
 * into bench/results.json. Run on its own (no BENCH_RESULT_FILE), a bench only prints.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface Goal {
  readonly op: '<=' | '>=' | '==';
  readonly value: number;
}

export interface ResultEntry {
  /** Stable identifier, `<issue id>.<area>.<figure>`, e.g. `B4.webhook.p99`. */
  readonly id: string;
  /** What was measured, in words. */
  readonly name: string;
  readonly value: number;
  /** `ms`, `s`, `MB`, `/s`, `ratio`, ... */
  readonly unit: string;
  readonly goal?: Goal;
  /** The figure this one is compared against, measured in the same run. */
  readonly baseline?: { readonly value: number; readonly name: string };
  readonly ratio?: number;
  /** Whether the goal was met; computed from `goal` when not given. Absent when there is no goal. */
  readonly pass?: boolean;
  readonly notes?: string;
}

/** What one bench process leaves in its BENCH_RESULT_FILE. */
export interface BenchFragment {
  readonly entries: ResultEntry[];
  /** Anything too big or too specific for an entry (a sample series, per-verb request counts). */
  readonly details: Record<string, unknown>;
}

export function meetsGoal(value: number, goal: Goal): boolean {
  if (!Number.isFinite(value)) return false;
  switch (goal.op) {
    case '<=':
      return value <= goal.value;
    case '>=':
      return value >= goal.value;
    case '==':
      return value === goal.value;
  }
}

/** Fills in `pass` from the goal unless the caller judged it (e.g. a criterion that needs more than one figure). */
export function judged(entry: ResultEntry): ResultEntry {
  if (entry.pass !== undefined || entry.goal === undefined) return entry;
  return { ...entry, pass: meetsGoal(entry.value, entry.goal) };
}

export function readFragment(file: string): BenchFragment | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const parsed = JSON.parse(text) as Partial<BenchFragment>;
  return { entries: Array.isArray(parsed.entries) ? parsed.entries : [], details: parsed.details ?? {} };
}

/**
 * Records figures of this bench process: merged into its fragment (an entry with the same id is
 * replaced), so a bench may call it once per phase and a phase that completed survives a later
 * failure. Synchronous, so that a process.exit() right after it loses nothing.
 */
export function recordResults(entries: readonly ResultEntry[], details: Record<string, unknown> = {}): void {
  const file = process.env['BENCH_RESULT_FILE'];
  if (!file) return;
  const current = readFragment(file) ?? { entries: [], details: {} };
  const byId = new Map(current.entries.map((e) => [e.id, e]));
  for (const e of entries) byId.set(e.id, judged(e));
  const next: BenchFragment = { entries: [...byId.values()], details: { ...current.details, ...details } };
  // Write then rename: the runner never reads half a file, even if this process is killed mid-write.
  writeFileSync(`${file}.tmp`, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** `<= 150`, `>= 50000`, or '' without a goal. */
export function formatGoal(goal: Goal | undefined): string {
  return goal ? `${goal.op} ${formatNumber(goal.value)}` : '';
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 1000 || Number.isInteger(value) ? 0 : abs >= 100 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}
