import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Action } from '../../../src/runtime/controller.js';
import { EventRecorder } from '../../../src/runtime/events.js';
import { addFinalizer, reconcileWithFinalizer, removeFinalizer } from '../../../src/runtime/finalizers.js';
import type { KubeClient } from '../../../src/kube/kube-client.js';
import { coreResources, type KubeObject } from '../../../src/api/common/kube-object.js';
import { statusConflicts, statusWrites } from '../../../src/base/metrics.js';
import { metricValue } from '../../support/metric-value.js';
import { StatusWriter } from '../../../src/runtime/status.js';
import { createTestNamespace } from '../../support/cluster.js';
import { ensureGadgetCrd, gadgets, GADGET_GROUP, testClient } from './helpers.js';

const KIND = 'GadgetStatusTest';

describe('status writes, finalizers and events against the real apiserver', () => {
  let client: KubeClient;
  let ns: string;
  let writer: StatusWriter;

  beforeAll(async () => {
    await ensureGadgetCrd();
    client = testClient();
    ns = await createTestNamespace('rt-status');
    writer = new StatusWriter({ client, ref: gadgets, kind: KIND, fieldManager: 'endpoint-operator-test' });
  });
  afterAll(() => client.close());

  const gadget = (name: string): KubeObject => ({
    apiVersion: `${GADGET_GROUP}/v1`,
    kind: 'Gadget',
    metadata: { name },
    spec: { size: 1 },
  });

  it('writes status only when it changed (key order ignored) and counts each write', async () => {
    const created = await client.create<KubeObject>(gadgets, ns, gadget('g1'));
    const w0 = await metricValue(statusWrites, { kind: KIND });
    const first = await writer.update(created, () => ({
      phase: 'Ready',
      observedGeneration: 1,
      detail: { a: 1, b: 2 },
    }));
    expect(first.written).toBe(true);
    expect(first.object?.status).toEqual({ phase: 'Ready', observedGeneration: 1, detail: { a: 1, b: 2 } });
    expect(await metricValue(statusWrites, { kind: KIND })).toBe(w0 + 1);

    const fresh = await client.get<KubeObject>(gadgets, ns, 'g1');
    const same = await writer.update(fresh!, () => ({ detail: { b: 2, a: 1 }, observedGeneration: 1, phase: 'Ready' }));
    expect(same.written).toBe(false);
    expect(await metricValue(statusWrites, { kind: KIND })).toBe(w0 + 1);
    const after = await client.get<KubeObject>(gadgets, ns, 'g1');
    expect(after?.metadata.resourceVersion).toBe(fresh?.metadata.resourceVersion);

    // A removed field is removed on the server too (merge patch null), not left behind.
    const shrunk = await writer.update(after!, () => ({ phase: 'Ready', observedGeneration: 1 }));
    expect(shrunk.written).toBe(true);
    expect((await client.get<KubeObject>(gadgets, ns, 'g1'))?.status).toEqual({
      phase: 'Ready',
      observedGeneration: 1,
    });
    expect(await metricValue(statusWrites, { kind: KIND })).toBe(w0 + 2);
  });

  it('retries a 409 Conflict with a fresh read and recomputes the status from it', async () => {
    const stale = await client.create<KubeObject>(gadgets, ns, gadget('g2'));
    // Someone else changes the object: our copy is now stale.
    await client.patch(gadgets, ns, 'g2', { spec: { size: 2 } }, { type: 'merge' });
    const c0 = await metricValue(statusConflicts, { kind: KIND });
    const sizes: unknown[] = [];
    const result = await writer.update(stale, (current) => {
      const size = (current.spec as { size?: number } | undefined)?.size;
      sizes.push(size);
      return { observedSize: size };
    });
    expect(result.written).toBe(true);
    expect(sizes).toEqual([1, 2]);
    expect(await metricValue(statusConflicts, { kind: KIND })).toBe(c0 + 1);
    expect((await client.get<KubeObject>(gadgets, ns, 'g2'))?.status).toEqual({ observedSize: 2 });
  });

  it('adds and removes a finalizer, surviving a concurrent change, and routes apply/cleanup', async () => {
    const fin = 'runtime-test.endpoint-operator.dev/cleanup';
    const obj = await client.create<KubeObject>(coreResources.configMaps, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fin', finalizers: ['other.example.com/keep'] },
    });
    await client.patch(coreResources.configMaps, ns, 'fin', { data: { touched: 'yes' } }, { type: 'merge' }); // makes `obj` stale
    const added = await addFinalizer(client, coreResources.configMaps, obj, fin);
    expect(added?.metadata.finalizers).toEqual(['other.example.com/keep', fin]);

    const calls: string[] = [];
    const handlers = {
      apply: async () => {
        calls.push('apply');
        return Action.done();
      },
      cleanup: async () => {
        calls.push('cleanup');
        return { done: true, result: Action.done() };
      },
    };
    await reconcileWithFinalizer({ client, ref: coreResources.configMaps, finalizer: fin }, added!, handlers);
    expect(calls).toEqual(['apply']);
    await client.delete(coreResources.configMaps, ns, 'fin');
    const deleting = await client.get<KubeObject>(coreResources.configMaps, ns, 'fin');
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();
    await reconcileWithFinalizer({ client, ref: coreResources.configMaps, finalizer: fin }, deleting!, handlers);
    expect(calls).toEqual(['apply', 'cleanup']);
    const left = await client.get<KubeObject>(coreResources.configMaps, ns, 'fin');
    expect(left?.metadata.finalizers).toEqual(['other.example.com/keep']);
    // Removing the last finalizer lets the apiserver delete it.
    expect(await removeFinalizer(client, coreResources.configMaps, left!, 'other.example.com/keep')).toBeDefined();
    expect(await client.get(coreResources.configMaps, ns, 'fin')).toBeUndefined();
  });

  it('aggregates repeated events into one Event with a count', async () => {
    const regarding = await client.create<KubeObject>(gadgets, ns, gadget('g-events'));
    const recorder = new EventRecorder({ client, component: 'endpoint-operator-test' });
    for (let i = 0; i < 3; i++)
      expect(await recorder.record(regarding, 'Warning', 'InvalidSpec', 'spec.size: must be positive')).toBe(true);
    expect(await recorder.record(regarding, 'Normal', 'Reconciled', 'ok')).toBe(true);
    const events = await client.list<
      KubeObject & { reason?: string; count?: number; involvedObject?: { uid?: string } }
    >(coreResources.events, ns);
    const mine = events.items.filter((e) => e.involvedObject?.uid === regarding.metadata.uid);
    expect(mine.map((e) => `${e.reason}:${e.count}`).sort()).toEqual(['InvalidSpec:3', 'Reconciled:1']);
  });

  it('an event that cannot be written resolves false instead of throwing', async () => {
    const recorder = new EventRecorder({ client, component: 'endpoint-operator-test' });
    const ghost: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ghost', namespace: 'no-such-namespace-xyz', uid: 'u' },
    };
    expect(await recorder.record(ghost, 'Normal', 'Test', 'x')).toBe(false);
  });
});
