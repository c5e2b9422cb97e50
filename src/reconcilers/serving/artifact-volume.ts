/**
 * Where a model server finds its artifact. An `oci://registry/repository:tag` artifact is a Kubernetes image
 * volume (`volumes[].image`, KEP-4639: the kubelet pulls the OCI artifact, caches it per node and mounts it
 * read-only; KServe's "modelcar" without a sidecar); a `pvc://claim/path` artifact is the namespace's
 * PersistentVolumeClaim, mounted read-only at `path` (a subPath). Either way the server reads the files at
 * MOUNT_PATH, which `AIP_STORAGE_URI` then names, as Vertex names the artifact's copy. Any other URI
 * (`gs://` as Vertex users write it) is passed in AIP_STORAGE_URI unchanged, as before.
 */

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
