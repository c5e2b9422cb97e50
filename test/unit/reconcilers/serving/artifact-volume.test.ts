import { describe, expect, it } from 'vitest';
import type { ArtifactBucketSpec } from '../../../../src/api/prediction/v1/artifact-bucket.js';
import { resolveArtifact } from '../../../../src/reconcilers/serving/artifact-volume.js';

const map: Record<string, ArtifactBucketSpec> = {
  'demo-models': { oci: { repository: 'registry.local:5000/demo' } },
  'shared-store': { pvc: { claimName: 'model-store' } },
};
const buckets = (b: string): ArtifactBucketSpec | undefined => map[b];

function mounted(uri: string): unknown {
  const r = resolveArtifact(uri, buckets);
  if (!r.ok) throw new Error(r.message);
  return r.mount;
}

function refused(uri: string): string {
  const r = resolveArtifact(uri, buckets);
  if (r.ok) throw new Error(`${uri} resolved`);
  return r.message;
}

describe('resolving an artifact through the bucket map', () => {
  it('serves gs://bucket/a/b/tag of an OCI bucket as the image {repository}/a/b:tag', () => {
    expect(mounted('gs://demo-models/iris/1')).toMatchObject({
      volume: { image: { reference: 'registry.local:5000/demo/iris:1', pullPolicy: 'IfNotPresent' } },
      storageUri: '/mnt/models',
    });
    expect(mounted('gs://demo-models/team/iris/v2.1/')).toMatchObject({
      volume: { image: { reference: 'registry.local:5000/demo/team/iris:v2.1' } },
    });
    // One segment: the tag of the repository itself.
    expect(mounted('gs://demo-models/latest')).toMatchObject({
      volume: { image: { reference: 'registry.local:5000/demo:latest' } },
    });
  });

  it('serves gs://bucket/path of a PVC bucket as the claim with subPath path, read-only', () => {
    expect(mounted('gs://shared-store/iris/1')).toEqual({
      volume: { name: 'model-artifact', persistentVolumeClaim: { claimName: 'model-store', readOnly: true } },
      mount: { name: 'model-artifact', mountPath: '/mnt/models', readOnly: true, subPath: 'iris/1' },
      storageUri: '/mnt/models',
    });
    expect(mounted('gs://shared-store')).toMatchObject({ mount: { mountPath: '/mnt/models' } });
  });

  it('refuses an unmapped bucket, naming the bucket, the kind and what to add', () => {
    const message = refused('gs://crm-ml-models/churn/1');
    expect(message).toContain('bucket "crm-ml-models" is not in the bucket map');
    expect(message).toContain('add a ModelArtifactBucket "crm-ml-models"');
    expect(message).toContain('spec.oci.repository or spec.pvc.claimName');
  });

  it('refuses a path that makes no OCI reference, naming the segment and the rule', () => {
    expect(refused('gs://demo-models')).toContain('the path is empty');
    expect(refused('gs://demo-models/iris/v:1')).toContain('the last path segment "v:1" is not an OCI tag');
    expect(refused('gs://demo-models/Iris/1')).toContain('path segment "Iris" is not an OCI repository component');
  });

  it('passes oci:// and pvc:// through the map untouched, and no artifact is no mount', () => {
    expect(mounted('oci://r.local/m:1')).toMatchObject({ volume: { image: { reference: 'r.local/m:1' } } });
    expect(mounted('pvc://c/p')).toMatchObject({ mount: { subPath: 'p' } });
    expect(resolveArtifact(undefined, buckets)).toEqual({ ok: true, mount: undefined });
  });
});
