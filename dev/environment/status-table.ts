import { isRecord } from '../../src/api/common/text.js';

export interface StatusRow {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly ready: string;
  readonly reason: string;
  readonly message: string;
}

/** The Ready condition of an object as a table row (`Unknown`/`Pending` until the operator reports). */
export function statusRow(obj: unknown): StatusRow {
  const o = isRecord(obj) ? obj : {};
  const meta = isRecord(o.metadata) ? o.metadata : {};
  const status = isRecord(o.status) ? o.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const ready = conditions.find((c): c is Record<string, unknown> => isRecord(c) && c.type === 'Ready');
  const generation = typeof meta.generation === 'number' ? meta.generation : undefined;
  const observed = ready && typeof ready.observedGeneration === 'number' ? ready.observedGeneration : undefined;
  const stale = generation !== undefined && observed !== undefined && observed < generation;
  return {
    kind: typeof o.kind === 'string' ? o.kind : '?',
    namespace: typeof meta.namespace === 'string' ? meta.namespace : '',
    name: typeof meta.name === 'string' ? meta.name : '?',
    ready: ready && !stale ? String(ready.status) : 'Unknown',
    reason: ready ? String(ready.reason ?? '') : 'Pending',
    message: ready && typeof ready.message === 'string' ? ready.message : '',
  };
}

export function isReady(row: StatusRow): boolean {
  return row.ready === 'True';
}

/** A fixed-width table like `kubectl get`, one row per object, sorted by kind then name. */
export function renderStatusTable(rows: readonly StatusRow[], maxMessage = 60): string {
  const sorted = [...rows].sort(
    (a, b) => a.kind.localeCompare(b.kind) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
  const header = {
    kind: 'KIND',
    namespace: 'NAMESPACE',
    name: 'NAME',
    ready: 'READY',
    reason: 'REASON',
    message: 'MESSAGE',
  };
  const cells = [
    header,
    ...sorted.map((r) => ({
      ...r,
      message: r.message.length > maxMessage ? `${r.message.slice(0, maxMessage - 1)}…` : r.message,
    })),
  ];
  const cols = ['kind', 'namespace', 'name', 'ready', 'reason', 'message'] as const;
  const widths = cols.map((c) => Math.max(...cells.map((row) => row[c].length)));
  return cells
    .map((row) =>
      cols
        .map((c, i) => (i === cols.length - 1 ? row[c] : row[c].padEnd(widths[i] ?? 0)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}
