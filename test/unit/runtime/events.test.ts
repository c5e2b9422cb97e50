import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import { ManualClock } from '../../support/manual-clock.js';
import { EventRecorder } from '../../../src/runtime/events.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';

/** Records create/patch calls; `failNext` scripts an error for the next call. */
class RecordingClient implements Pick<KubeClient, 'create' | 'patch'> {
  readonly calls: Array<{ verb: string; name: string; body: Record<string, unknown> }> = [];
  failNext: Error | undefined;
  async create<T>(_ref: unknown, _ns: unknown, body: unknown): Promise<T> {
    const b = body as { metadata: { name: string } } & Record<string, unknown>;
    this.calls.push({ verb: 'create', name: b.metadata.name, body: b });
    return this.answer(b) as T;
  }
  async patch<T>(_ref: unknown, _ns: unknown, name: string, patch: unknown): Promise<T> {
    this.calls.push({ verb: 'patch', name, body: patch as Record<string, unknown> });
    return this.answer(patch) as T;
  }
  private answer(v: unknown): unknown {
    const err = this.failNext;
    this.failNext = undefined;
    if (err) throw err;
    return v;
  }
}

const model: KubeObject = {
  apiVersion: 'prediction.endpoint-operator.dev/v1',
  kind: 'DeployedModel',
  metadata: { name: 'dm-1', namespace: 'demo', uid: 'u-1', resourceVersion: '5' },
};

describe('EventRecorder', () => {
  it('creates one Event, then bumps its count for repeats inside the window', async () => {
    const client = new RecordingClient();
    const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
    const rec = new EventRecorder({ client, component: 'endpoint-operator', clock });
    await rec.record(model, 'Warning', 'UndeployBlocked', 'spec.trafficSplit still gives dm-1 traffic');
    await clock.advance(60_000);
    await rec.record(model, 'Warning', 'UndeployBlocked', 'spec.trafficSplit still gives dm-1 traffic');
    await rec.record(model, 'Warning', 'UndeployBlocked', 'spec.trafficSplit still gives dm-1 traffic');
    expect(client.calls.map((c) => c.verb)).toEqual(['create', 'patch', 'patch']);
    const created = client.calls[0]?.body;
    expect(created).toMatchObject({
      type: 'Warning',
      reason: 'UndeployBlocked',
      count: 1,
      firstTimestamp: '2026-01-01T00:00:00Z',
      involvedObject: { kind: 'DeployedModel', name: 'dm-1', namespace: 'demo', uid: 'u-1' },
      source: { component: 'endpoint-operator' },
    });
    expect(client.calls[2]?.body).toEqual({ count: 3, lastTimestamp: '2026-01-01T00:01:00Z' });
    expect(new Set(client.calls.map((c) => c.name)).size).toBe(1);
  });

  it('a different reason or message is a different Event; a repeat after the window starts a new one', async () => {
    const client = new RecordingClient();
    const clock = new ManualClock(0);
    const rec = new EventRecorder({ client, component: 'c', clock, aggregationWindowMs: 1000 });
    await rec.record(model, 'Normal', 'Reconciled', 'a');
    await rec.record(model, 'Normal', 'Reconciled', 'b');
    await clock.advance(1000);
    await rec.record(model, 'Normal', 'Reconciled', 'a');
    expect(client.calls.map((c) => c.verb)).toEqual(['create', 'create', 'create']);
  });

  it('recreates the Event when the aggregated one expired (404), and never throws', async () => {
    const client = new RecordingClient();
    const rec = new EventRecorder({ client, component: 'c', clock: new ManualClock(0) });
    await rec.record(model, 'Normal', 'Reconciled', 'a');
    client.failNext = new ApiError(404, 'NotFound', 'gone', {});
    expect(await rec.record(model, 'Normal', 'Reconciled', 'a')).toBe(true);
    expect(client.calls.map((c) => c.verb)).toEqual(['create', 'patch', 'create']);
    client.failNext = new ApiError(403, 'Forbidden', 'no RBAC for events', {});
    expect(await rec.record(model, 'Normal', 'Other', 'x')).toBe(false);
  });
});
