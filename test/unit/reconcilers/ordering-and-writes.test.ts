import { describe, expect, it } from 'vitest';
import { OrderingGrace } from '../../../src/reconcilers/ordering-grace.js';
import { OwnWrites } from '../../../src/reconcilers/own-writes.js';
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
    const reported = deployedModel('dm2', 'ep').status({ conditions: [{ type: 'Ready', status: 'True', reason: 'Reconciled', message: '', lastTransitionTime: 'x' }] }).build();
    expect(grace.holdMs(reported, 'EndpointNotFound')).toBe(0);
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
