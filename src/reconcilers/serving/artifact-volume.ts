/**
 * Where a model server finds its artifact. An `oci://registry/repository:tag` artifact is a Kubernetes image
 * volume (`volumes[].image`, KEP-4639: the kubelet pulls the OCI artifact, caches it per node and mounts it
 * read-only; KServe's "modelcar" without a sidecar); a `pvc://claim/path` artifact is the namespace's
 * PersistentVolumeClaim, mounted read-only at `path` (a subPath). Either way the server reads the files at
 * MOUNT_PATH, which `AIP_STORAGE_URI` then names, as Vertex names the artifact's copy. A `gs://bucket/path`
 * artifact, as Vertex users write it, is one of those through the bucket map (the ModelArtifactBucket named
 * `bucket`): its OCI repository, the path's last segment the tag and the segments before it appended to the
 * repository (`gs://models/iris/1` with `registry:5000/ml` → `registry:5000/ml/iris:1`), or its claim with
 * the path as subPath. A bucket the map lacks is not served (resolveArtifact says why: ArtifactBucketUnmapped).
 */
import {
  OCI_PATH_COMPONENT,
  OCI_TAG,
  artifactBucketKind,
  type ArtifactBucketSpec,
} from '../../api/prediction/v1/artifact-bucket.js';

/** KServe's mount point for model files, which its servers and many custom ones default to. */
export const MOUNT_PATH = '/mnt/models';
export const ARTIFACT_VOLUME = 'model-artifact';

export interface ArtifactMount {
  readonly volume: Record<string, unknown>;
  readonly mount: Record<string, unknown>;
  /** What AIP_STORAGE_URI says: the mount path. */
  readonly storageUri: string;
}

const OCI = 'oci://';
const PVC = 'pvc://';
const GS = 'gs://';

/** The bucket map as the reconciler reads it: a bucket's entry, or undefined when it has none. */
export type BucketLookup = (bucket: string) => ArtifactBucketSpec | undefined;

/** What serves an artifact: its mount (none for no artifact), or why it cannot be served. */
export type ArtifactResolution =
  { readonly ok: true; readonly mount: ArtifactMount | undefined } | { readonly ok: false; readonly message: string };

/**
 * `artifactUri` resolved through the bucket map: `gs://` becomes the `oci://` or `pvc://` URI its bucket's
 * entry names; an unmapped bucket, or a path that makes no OCI reference, is an error message naming the
 * bucket map and what to write.
 */
export function resolveArtifact(artifactUri: string | undefined, buckets: BucketLookup): ArtifactResolution {
  if (artifactUri === undefined || !artifactUri.startsWith(GS)) return { ok: true, mount: artifactMount(artifactUri) };
  const [bucket = '', ...segments] = artifactUri.slice(GS.length).split('/');
  const path = segments.filter((s) => s !== '');
  const entry = buckets(bucket);
  const kind = artifactBucketKind.kind;
  if (entry === undefined)
    return {
      ok: false,
      message: `artifactUri ${JSON.stringify(artifactUri)}: bucket "${bucket}" is not in the bucket map (no ${kind} named "${bucket}"); this cluster cannot read Cloud Storage, so add a ${kind} "${bucket}" saying where its objects are (spec.oci.repository or spec.pvc.claimName; docs/models.md, "The bucket map") and the model deploys, or name the artifact as oci:// or pvc://`,
    };
  if (entry.pvc !== undefined)
    return { ok: true, mount: artifactMount(`${PVC}${entry.pvc.claimName}/${path.join('/')}`) };
  const repository = entry.oci?.repository ?? '';
  const tag = path.at(-1);
  const where = `artifactUri ${JSON.stringify(artifactUri)} through ${kind} "${bucket}" (oci ${repository})`;
  if (tag === undefined)
    return {
      ok: false,
      message: `${where}: the path is empty; gs://${bucket}/a/b/{tag} is served as ${repository}/a/b:{tag}, so the path needs at least its tag`,
    };
  if (!OCI_TAG.test(tag))
    return {
      ok: false,
      message: `${where}: the last path segment "${tag}" is not an OCI tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}): it is the artifact's tag`,
    };
  const bad = path.slice(0, -1).find((s) => !OCI_PATH_COMPONENT.test(s));
  if (bad !== undefined)
    return {
      ok: false,
      message: `${where}: path segment "${bad}" is not an OCI repository component (lowercase letters and digits, separated by ".", "_", "__" or "-"): the segments before the tag extend the repository`,
    };
  return { ok: true, mount: artifactMount(`${OCI}${[repository, ...path.slice(0, -1)].join('/')}:${tag}`) };
}

/** The volume and mount serving `artifactUri`, or undefined when the URI is passed through unchanged. */
export function artifactMount(artifactUri: string | undefined): ArtifactMount | undefined {
  if (artifactUri === undefined) return undefined;
  if (artifactUri.startsWith(OCI)) {
    const reference = artifactUri.slice(OCI.length);
    return {
      // IfNotPresent: a tag names one artifact (a version never changes), so the node's cached copy serves.
      volume: { name: ARTIFACT_VOLUME, image: { reference, pullPolicy: 'IfNotPresent' } },
      mount: { name: ARTIFACT_VOLUME, mountPath: MOUNT_PATH, readOnly: true },
      storageUri: MOUNT_PATH,
    };
  }
  if (artifactUri.startsWith(PVC)) {
    const [claimName = '', ...rest] = artifactUri.slice(PVC.length).split('/');
    const subPath = rest.filter((s) => s !== '').join('/');
    return {
      volume: { name: ARTIFACT_VOLUME, persistentVolumeClaim: { claimName, readOnly: true } },
      mount: {
        name: ARTIFACT_VOLUME,
        mountPath: MOUNT_PATH,
        readOnly: true,
        ...(subPath === '' ? {} : { subPath }),
      },
      storageUri: MOUNT_PATH,
    };
  }
  return undefined;
}
