import { describe, expect, it } from 'vitest';
import { OrderingGrace } from '../../../src/reconcilers/ordering-grace.js';
import { OwnWrites } from '../../../src/reconcilers/own-writes.js';
import type { ReconcilerContext } from '../../../src/reconcilers/context.js';
import { objectToReconcile } from '../../../src/reconcilers/prologue.js';
import type { ReconcileRequest } from '../../../src/runtime/controller.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { silentLogger } from '../../../src/base/logger.js';
import { deployedModel } from './fixtures.js';
import { ManualClock } from '../../support/manual-clock.js';

describe('OrderingGrace', () => {
  it('holds ordering states of a new object for the grace, then lets them through', async () => {
    const clock = new ManualClock(1_000);
    const grace = new OrderingGrace(2_000, clock);
    const dm = deployedModel('dm', 'later').build();
    expect(grace.holdMs(dm, 'EndpointNotFound')).toBe(2_000);
    await clock.advance(1_500);
    expect(grace.holdMs(dm, 'EndpointNotFound')).toBe(500);
    await clock.advance(500);
    expect(grace.holdMs(dm, 'EndpointNotFound')).toBe(0);
  });

  it('never holds other reasons, nor objects that already have a Ready condition', () => {
    const grace = new OrderingGrace(2_000, new ManualClock(0));
    const dm = deployedModel('dm', 'ep').build();
    expect(grace.holdMs(dm, 'InvalidSpec')).toBe(0);
    expect(grace.holdMs(dm, 'Reconciled')).toBe(0);
    const reported = deployedModel('dm2', 'ep')
      .status({
        conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: 'x' }],
      })
      .build();
    expect(grace.holdMs(reported, 'EndpointNotFound')).toBe(0);
  });

  it('remembers an object only until it has been reported, not every cached object', () => {
    const grace = new OrderingGrace(2_000, new ManualClock(0));
    const fresh = deployedModel('dm', 'later').build();
    grace.holdMs(fresh, 'EndpointNotFound');
    expect(grace.size).toBe(1);
    // The same object once its first status write reached the cache.
    const reported = {
      ...fresh,
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'EndpointNotFound', message: '', lastTransitionTime: 'x' },
        ],
      },
    };
    expect(grace.holdMs(reported, 'EndpointNotFound')).toBe(0);
    expect(grace.size).toBe(0);
    // A restart meets every object already reported: none is remembered.
    grace.holdMs(
      deployedModel('other', 'ep')
        .status({
          conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: 'x' }],
        })
        .build(),
      'Reconciled',
    );
    expect(grace.size).toBe(0);
  });
});

describe('OwnWrites', () => {
  it('flags a cached version our write replaced, until the cache moves past it', () => {
    const writes = new OwnWrites();
    const v1 = deployedModel('dm', 'ep').build();
    v1.metadata.resourceVersion = '10';
    const v2 = { ...v1, metadata: { ...v1.metadata, resourceVersion: '11' } };
    const v3 = { ...v1, metadata: { ...v1.metadata, resourceVersion: '12' } };
    expect(writes.isStale(v1)).toBe(false);
    writes.replaced(v1, v2);
    writes.replaced(v2, v3);
    expect(writes.isStale(v1)).toBe(true);
    expect(writes.isStale(v2)).toBe(true);
    expect(writes.isStale(v3)).toBe(false);
    // Once the cache caught up, the memory is gone.
    expect(writes.isStale(v1)).toBe(false);
  });

  it('ignores a write that did not change the version', () => {
    const writes = new OwnWrites();
    const v1 = deployedModel('dm', 'ep').build();
    writes.replaced(v1, v1);
    expect(writes.isStale(v1)).toBe(false);
  });
});

describe('objectToReconcile', () => {
  const request = (key: string): ReconcileRequest => {
    const [namespace, name] = key.split('/') as [string, string];
    return { key, namespace, name, log: silentLogger, signal: new AbortController().signal };
  };
  const context = (cached: KubeObject[], ownWrites: OwnWrites): ReconcilerContext => {
    const get = (namespace: string | undefined, name: string) =>
      cached.find((o) => o.metadata.namespace === namespace && o.metadata.name === name);
    return { informers: { deployedModels: { get } }, ownWrites } as unknown as ReconcilerContext;
  };

  it('forgets our writes to an object that is gone (the answer to the write that deleted it came after its DELETED event)', () => {
    const writes = new OwnWrites();
    const v1 = deployedModel('dm', 'ep').build();
    v1.metadata.resourceVersion = '10';
    // Removing the last finalizer: the delete handler already ran, then the patch's answer is recorded.
    writes.forget(v1);
    writes.replaced(v1, { ...v1, metadata: { ...v1.metadata, resourceVersion: '11' } });
    expect(writes.size).toBe(1);
    expect(objectToReconcile(context([], writes), 'deployedModels', request('ns/dm'))).toBeUndefined();
    expect(writes.size).toBe(0);
  });

  it('skips a cached version our write replaced, and keeps that memory while the object exists', () => {
    const writes = new OwnWrites();
    const v1 = deployedModel('dm', 'ep').build();
    v1.metadata.resourceVersion = '10';
    writes.replaced(v1, { ...v1, metadata: { ...v1.metadata, resourceVersion: '11' } });
    expect(objectToReconcile(context([v1], writes), 'deployedModels', request('ns/dm'))).toBeUndefined();
    expect(writes.size).toBe(1);
  });
});
