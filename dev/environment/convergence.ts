/**
 * The live table `npm start` shows while the examples converge: every resource of the project's kinds in the
 * namespace with its Ready condition, redrawn in place on a terminal.
 */
import { allKinds } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import { isReady, renderStatusTable, statusRow, type StatusRow } from './status-table.js';

async function listRows(client: KubeClient, namespace: string): Promise<StatusRow[]> {
  const rows: StatusRow[] = [];
  for (const def of allKinds) {
    // Sessions come and go with sign-ins; the bucket map (cluster-scoped) is configuration with no Ready of its own.
    if (def.kind === 'SignInSession' || def.scope === 'Cluster') continue;
    const version = def.versions.find((v) => v.storage)?.name ?? 'v1';
    const list = await client.list({ group: def.group, version, plural: def.plural, namespaced: true }, namespace);
    rows.push(...list.items.map((o) => statusRow({ ...o, kind: def.kind })));
  }
  return rows;
}

/** Shows the table until every resource is Ready (or the wait ends); redraws in place on a terminal. */
export async function watchConvergence(
  client: KubeClient,
  namespace: string,
  waitSeconds: number,
  signal: AbortSignal,
  started: number,
): Promise<{ rows: StatusRow[]; seconds: number }> {
  const tty = process.stdout.isTTY === true;
  let drawn = 0;
  let last = '';
  let rows: StatusRow[] = [];
  while (!signal.aborted) {
    rows = await listRows(client, namespace).catch(() => rows);
    const table = renderStatusTable(rows);
    const elapsed = (Date.now() - started) / 1000;
    const ready = rows.filter(isReady).length;
    const text = `${table}\n${ready}/${rows.length} Ready after ${elapsed.toFixed(0)} s`;
    if (tty) {
      process.stdout.write(`${drawn > 0 ? `\x1b[${drawn}F\x1b[J` : ''}${text}\n`);
      drawn = text.split('\n').length;
    } else if (table !== last) {
      process.stdout.write(`${text}\n\n`);
    }
    last = table;
    if ((rows.length > 0 && ready === rows.length) || elapsed >= waitSeconds) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { rows, seconds: (Date.now() - started) / 1000 };
}
