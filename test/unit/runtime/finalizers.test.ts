import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/api-error.js';
import { Action } from '../../../src/runtime/controller.js';
import { reconcileWithFinalizer, type FinalizerClient } from '../../../src/runtime/finalizers.js';
import type { KubeObject, ResourceRef } from '../../../src/api/common/kube-object.js';

const ref: ResourceRef = {
  group: 'prediction.endpoint-operator.dev',
  version: 'v1',
  plural: 'deployedmodels',
  namespaced: true,
};
const FIN = 'prediction.endpoint-operator.dev/undeploy';

/** Records every call; answers patches with the patched object, or with scripted errors. */
class RecordingClient implements FinalizerClient {
  readonly calls: string[] = [];
  readonly patchErrors: Error[] = [];
  constructor(private current: KubeObject) {}
  gone = false;
  async get<T>(_ref: ResourceRef, ns: string | undefined, name: string): Promise<T | undefined> {
    this.calls.push(`get ${ns}/${name}`);
    return this.gone ? undefined : (structuredClone(this.current) as T);
  }
  async patch<T>(_ref: ResourceRef, ns: string | undefined, name: string, patch: unknown): Promise<T> {
    this.calls.push(`patch ${ns}/${name} ${JSON.stringify(patch)}`);
    const err = this.patchErrors.shift();
    if (err) throw err;
    const meta = (patch as { metadata: { finalizers: string[] } }).metadata;
    this.current = {
      ...this.current,
      metadata: {
        ...this.current.metadata,
        finalizers: meta.finalizers,
        resourceVersion: String(Number(this.current.metadata.resourceVersion) + 1),
      },
    };
    return structuredClone(this.current) as T;
  }
  /** Someone else changed the object. */
  bump(finalizers: string[]): void {
    this.current = {
      ...this.current,
      metadata: {
        ...this.current.metadata,
        finalizers,
        resourceVersion: String(Number(this.current.metadata.resourceVersion) + 1),
      },
    };
  }
}

const dm = (meta: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  metadata: { name: 'm', namespace: 'ns', resourceVersion: '7', ...meta },
});

function handlers(cleanupDone: boolean) {
  const seen: string[] = [];
  return {
    seen,
    apply: async () => {
      seen.push('apply');
      return Action.requeueAfter(1000);
    },
    cleanup: async () => {
      seen.push('cleanup');
      return { done: cleanupDone, result: cleanupDone ? Action.done() : Action.requeueAfter(5000) };
    },
  };
}

describe('reconcileWithFinalizer', () => {
  it('live without the finalizer: adds it with a resourceVersion-guarded patch, then applies the patched object', async () => {
    const client = new RecordingClient(dm());
    const applied: KubeObject[] = [];
    const patched: Array<[string | undefined, string | undefined]> = [];
    const flow = {
      client,
      ref,
      finalizer: FIN,
      fieldManager: 'fm',
      onPatched: (b: KubeObject, a: KubeObject | undefined) =>
        patched.push([b.metadata.resourceVersion, a?.metadata.resourceVersion]),
    };
    const result = await reconcileWithFinalizer(flow, dm(), {
      apply: async (o) => {
        applied.push(o);
        return Action.requeueAfter(1000);
      },
      cleanup: async () => {
        throw new Error('not deleting');
      },
    });
    expect(result).toEqual(Action.requeueAfter(1000));
    expect(client.calls).toEqual([`patch ns/m {"metadata":{"resourceVersion":"7","finalizers":["${FIN}"]}}`]);
    expect(applied.map((o) => [o.metadata.resourceVersion, o.metadata.finalizers])).toEqual([['8', [FIN]]]);
    expect(patched).toEqual([['7', '8']]);
  });

  it('live without the finalizer, deleted before the patch (404): nothing to apply', async () => {
    const client = new RecordingClient(dm());
    client.patchErrors.push(new ApiError(409, 'Conflict', 'conflict', {}));
    client.gone = true;
    const h = handlers(true);
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, dm(), h)).toEqual(Action.done());
    expect(h.seen).toEqual([]);
  });

  it('deleting, cleanup done: released runs once the finalizer is gone', async () => {
    const obj = dm({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const client = new RecordingClient(obj);
    const order: string[] = [];
    await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, {
      apply: async () => Action.done(),
      cleanup: async () => {
        order.push('cleanup');
        return { done: true, result: Action.done() };
      },
      released: () => order.push(`released after ${client.calls.length} call(s)`),
    });
    expect(order).toEqual(['cleanup', 'released after 1 call(s)']);
  });

  it('live with the finalizer: applies and makes no API call itself', async () => {
    const obj = dm({ finalizers: [FIN] });
    const client = new RecordingClient(obj);
    const h = handlers(true);
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, h)).toEqual(Action.requeueAfter(1000));
    expect(client.calls).toEqual([]);
    expect(h.seen).toEqual(['apply']);
  });

  it('deleting: cleans up, then removes only its own finalizer', async () => {
    const obj = dm({ finalizers: ['other/x', FIN], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const client = new RecordingClient(obj);
    const h = handlers(true);
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, h)).toEqual(Action.done());
    expect(h.seen).toEqual(['cleanup']);
    expect(client.calls).toEqual(['patch ns/m {"metadata":{"resourceVersion":"7","finalizers":["other/x"]}}']);
  });

  it('deleting but cleanup not finished (UndeployBlocked): keeps the finalizer and returns the cleanup result', async () => {
    const obj = dm({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const client = new RecordingClient(obj);
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, handlers(false))).toEqual(
      Action.requeueAfter(5000),
    );
    expect(client.calls).toEqual([]);
  });

  it('deleting without our finalizer: nothing to do', async () => {
    const obj = dm({ finalizers: ['other/x'], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const client = new RecordingClient(obj);
    const h = handlers(true);
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, h)).toEqual(Action.done());
    expect(client.calls).toEqual([]);
    expect(h.seen).toEqual([]);
  });

  it('on 409 Conflict re-reads and patches the fresh list, keeping finalizers others added meanwhile', async () => {
    const client = new RecordingClient(dm());
    client.bump(['other/late']);
    client.patchErrors.push(new ApiError(409, 'Conflict', 'the object has been modified', {}));
    await reconcileWithFinalizer({ client, ref, finalizer: FIN }, dm(), handlers(true));
    expect(client.calls).toEqual([
      `patch ns/m {"metadata":{"resourceVersion":"7","finalizers":["${FIN}"]}}`,
      'get ns/m',
      `patch ns/m {"metadata":{"resourceVersion":"8","finalizers":["other/late","${FIN}"]}}`,
    ]);
  });

  it('removing from an object already gone (404) is success', async () => {
    const obj = dm({ finalizers: [FIN], deletionTimestamp: '2026-01-01T00:00:00Z' });
    const client = new RecordingClient(obj);
    client.patchErrors.push(new ApiError(404, 'NotFound', 'gone', {}));
    expect(await reconcileWithFinalizer({ client, ref, finalizer: FIN }, obj, handlers(true))).toEqual(Action.done());
  });
});
