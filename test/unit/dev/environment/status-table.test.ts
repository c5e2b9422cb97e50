import { describe, expect, it } from 'vitest';
import { isReady, renderStatusTable, statusRow } from '../../../../dev/environment/status-table.js';

const ready = (generation: number, observed: number, status = 'True') => ({
  kind: 'PredictionEndpoint',
  metadata: { name: 'fraud', namespace: 'demo', generation },
  status: {
    conditions: [
      {
        type: 'Ready',
        status,
        reason: status === 'True' ? 'Reconciled' : 'TrafficSplitUnresolved',
        message: 'spec.trafficSplit[1]: no deployed model has id 1',
        observedGeneration: observed,
      },
    ],
  },
});

describe('dev status table', () => {
  it('reads the Ready condition, and treats a condition of an older generation as not yet known', () => {
    expect(statusRow(ready(2, 2))).toMatchObject({ ready: 'True', reason: 'Reconciled' });
    expect(isReady(statusRow(ready(3, 2)))).toBe(false);
    expect(statusRow({ kind: 'Shop', metadata: { name: 'x' } })).toMatchObject({ ready: 'Unknown', reason: 'Pending' });
    expect(statusRow(null)).toMatchObject({ kind: '?', name: '?' });
  });

  it('renders aligned columns sorted by kind and name, shortening long messages', () => {
    const rows = [
      statusRow(ready(1, 1, 'False')),
      statusRow({ kind: 'DeployedModel', metadata: { name: 'a', namespace: 'demo' } }),
    ];
    const lines = renderStatusTable(rows, 20).split('\n');
    expect(lines[0]).toMatch(/^KIND\s+NAMESPACE\s+NAME\s+READY\s+REASON\s+MESSAGE$/);
    expect(lines[1]).toMatch(/^DeployedModel\s+demo\s+a\s+Unknown\s+Pending$/);
    expect(lines[2]).toContain('TrafficSplitUnresolved');
    expect(lines[2]).toContain('…');
    expect(lines[2]!.indexOf('demo')).toBe(lines[1]!.indexOf('demo'));
  });
});
