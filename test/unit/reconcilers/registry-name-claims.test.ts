import { afterEach, describe, expect, it } from 'vitest';
import { RegistryNameClaims } from '../../../src/reconcilers/registry-name-claims.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';
import { staticInformer, type StaticInformer } from '../../support/static-informer.js';
import { registryService } from './fixtures.js';

const NAME = 'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout';

describe('RegistryNameClaims across shards', () => {
  const informers: StaticInformer[] = [];
  afterEach(() => informers.splice(0).forEach((i) => i.stop()));

  it('tracks claimants from several informers and tells only when the set of claimants of a name changes', async () => {
    const valid = (s: KubeObject): boolean =>
      s.metadata.deletionTimestamp === undefined && (s.spec as { invalid?: boolean }).invalid !== true;
    const claims = new RegistryNameClaims(valid);
    const changes: string[] = [];
    claims.onChange((n) => changes.push(n));
    const a = registryService('svc', NAME).inNamespace('team-a').created('2026-01-01T00:00:00Z').build();
    const b = registryService('svc', NAME).inNamespace('team-b').created('2026-02-01T00:00:00Z').build();
    const shardA = staticInformer('a', [a]);
    const shardB = staticInformer('b', []);
    informers.push(shardA, shardB);
    claims.observe(shardA.informer);
    claims.observe(shardB.informer);
    await Promise.all([shardA.start(), shardB.start()]);
    expect(changes).toEqual([NAME]);
    expect(claims.claims(NAME).owner?.metadata.namespace).toBe('team-a');

    shardB.push('ADDED', b);
    expect(changes).toHaveLength(2);
    expect(claims.claims(NAME).others.map((o) => o.metadata.namespace)).toEqual(['team-b']);

    // A status write of a claimant is not news.
    shardA.push('MODIFIED', { ...a, status: { observedGeneration: 1 } });
    expect(changes).toHaveLength(2);

    // Becoming invalid drops the claim; the other takes the name.
    shardA.push('MODIFIED', { ...a, spec: { ...(a.spec as object), invalid: true } });
    expect(changes).toHaveLength(3);
    expect(claims.claims(NAME).owner?.metadata.namespace).toBe('team-b');

    shardB.push('DELETED', b);
    expect(changes).toHaveLength(4);
    expect(claims.claims(NAME).owner).toBeUndefined();
  });
});
