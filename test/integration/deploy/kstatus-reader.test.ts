import { beforeAll, describe, expect, it } from 'vitest';
import { ensureGoBuild } from '../../../dev/cluster/go-build.js';
import { KSTATUS, kstatus } from '../../support/kstatus.js';

beforeAll(async () => {
  await ensureGoBuild(KSTATUS);
}, 600_000);

// The order of cli-utils pkg/kstatus/status rules for a custom resource, as the library itself applies them:
// the operator's conditions (Ready, Reconciling, Stalled, observedGeneration) are designed for these rules.
const cond = (type: string, status: string) => ({ type, status, reason: 'R', message: `${type} ${status}` });
const obj = (conditions: unknown[], extra: { generation?: number; observed?: number; deletionTimestamp?: string } = {}) => ({
  kind: 'Shop',
  metadata: { generation: extra.generation ?? 1, ...(extra.deletionTimestamp ? { deletionTimestamp: extra.deletionTimestamp } : {}) },
  status: { observedGeneration: extra.observed ?? 1, conditions },
});

describe('kstatus (cli-utils pkg/kstatus/status) on the conditions the operator writes', { timeout: 120_000 }, () => {
  it('Terminating comes first, before generations and conditions', async () => {
    expect((await kstatus(obj([cond('Stalled', 'True')], { deletionTimestamp: '2026-01-01T00:00:00Z', generation: 2 }))).status).toBe('Terminating');
  });
  it('a generation not observed is InProgress whatever the conditions say', async () => {
    expect(await kstatus(obj([cond('Ready', 'True')], { generation: 2, observed: 1 }))).toEqual({ status: 'InProgress', message: 'Shop generation is 2, but latest observed generation is 1' });
  });
  it('Reconciling=True is InProgress, Stalled=True is Failed, the first in list order wins', async () => {
    expect((await kstatus(obj([cond('Ready', 'False'), cond('Stalled', 'True')]))).status).toBe('Failed');
    expect((await kstatus(obj([cond('Reconciling', 'True'), cond('Ready', 'True')]))).status).toBe('InProgress');
    expect((await kstatus(obj([cond('Stalled', 'False'), cond('Reconciling', 'False'), cond('Ready', 'True')]))).status).toBe('Current');
  });
  it('then Ready: True is Current, False or Unknown InProgress; no known condition is Current', async () => {
    expect((await kstatus(obj([cond('Ready', 'False')]))).status).toBe('InProgress');
    expect((await kstatus(obj([cond('Ready', 'Unknown')]))).status).toBe('InProgress');
    expect((await kstatus(obj([cond('Other', 'False')]))).status).toBe('Current');
    expect((await kstatus({ kind: 'Shop', metadata: { generation: 1 } })).status).toBe('Current');
  });
});
