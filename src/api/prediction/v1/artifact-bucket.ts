/**
 * ModelArtifactBucket v1: the bucket map, one cluster-scoped object per Cloud Storage bucket
 * (`metadata.name` is the bucket's name), saying where that bucket's objects really are on this cluster:
 * an OCI registry repository (served as an image volume) or a PersistentVolumeClaim (mounted read-only).
 * Vertex users write `gs://bucket/path` and the SDK keeps it; the cluster cannot reach Cloud Storage, so a
 * `gs://` artifact is served only through this map (artifact-volume.ts resolves it; docs/models.md, "The
 * bucket map"). A kind rather than a chart value so that the apiserver validates each entry (schema and CEL)
 * and a change is followed live: a DeployedModel waiting for its bucket deploys as soon as the object exists.
 */
import { z } from 'zod';
import { fieldErrors, type ValidationResult } from '../../common/field-error.js';
import type { KindDefinition } from '../../common/kind.js';
import { isRecord } from '../../common/text.js';
import { validations } from '../../crd/cel.js';
import { decodeFields } from './decode-fields.js';
import { PREDICTION_GROUP } from './names.js';

/** One path component of an OCI repository name (distribution's reference grammar), lowercase. */
export const OCI_PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
/** An OCI tag (distribution's reference grammar). */
export const OCI_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
/** `registry[:port]/path[/path...]`, without tag or digest: the tags come from the artifact's path. */
export const OCI_REPOSITORY =
  /^[a-zA-Z0-9](?:[a-zA-Z0-9.-]*[a-zA-Z0-9])?(?::[0-9]{1,5})?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+$/;
/** A PersistentVolumeClaim's name: a DNS subdomain. */
const CLAIM_NAME = /^[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?$/;

const exactlyOneRule = {
  rule: 'has(self.oci) != has(self.pvc)',
  message: "exactly one of spec.oci and spec.pvc must be set: where this bucket's objects are",
} as const;

export const artifactBucketSpecSchema = z
  .object({
    oci: z
      .object({
        repository: z
          .string()
          .max(255)
          .regex(OCI_REPOSITORY, {
            error: 'must be registry/repository (lowercase path, no tag or digest: the tag comes from the path)',
          })
          .meta({
            description:
              'repository is registry[:port]/path, without a tag: gs://{bucket}/a/b/{tag} is served as the image volume {repository}/a/b:{tag}; required.',
          }),
      })
      .optional()
      .meta({ description: "oci says the bucket's objects are OCI artifacts in this repository; one of oci, pvc." }),
    pvc: z
      .object({
        claimName: z
          .string()
          .max(253)
          .regex(CLAIM_NAME, { error: 'must be a PersistentVolumeClaim name (a DNS subdomain)' })
          .meta({
            description:
              "claimName is the PersistentVolumeClaim holding the bucket's objects, in the namespace of each DeployedModel that names the bucket (a pod mounts only its own namespace's claims); gs://{bucket}/{path} is its subPath {path}; required.",
          }),
      })
      .optional()
      .meta({
        description:
          "pvc says the bucket's objects are files of a PersistentVolumeClaim, mounted read-only; one of oci, pvc.",
      }),
  })
  .meta(validations(exactlyOneRule));
export type ArtifactBucketSpec = z.infer<typeof artifactBucketSpecSchema>;

export const artifactBucketStatusSchema = z.object({});

export function validateArtifactBucket(obj: unknown): ValidationResult {
  if (!isRecord(obj))
    return { errors: [fieldErrors.typeInvalid('', obj, 'a ModelArtifactBucket must be an object')], warnings: [] };
  const decoded = decodeFields(artifactBucketSpecSchema, obj.spec, ['spec'], []);
  const errors = [...decoded.errors];
  if (isRecord(obj.spec) && (obj.spec.oci === undefined) === (obj.spec.pvc === undefined))
    errors.push(fieldErrors.invalid('spec', obj.spec, exactlyOneRule.message));
  return { errors, warnings: [] };
}

export const artifactBucketKind: KindDefinition = {
  group: PREDICTION_GROUP,
  kind: 'ModelArtifactBucket',
  listKind: 'ModelArtifactBucketList',
  plural: 'modelartifactbuckets',
  singular: 'modelartifactbucket',
  shortNames: [],
  // Not in the `endpoint-operator` category, which lists the reconciled kinds and their Ready condition
  // (`kubectl get endpoint-operator`, `kubectl wait`): the bucket map is configuration the operator reads, like the
  // machine catalogue, and has no status of its own.
  categories: [],
  description:
    "ModelArtifactBucket maps the Cloud Storage bucket of its name to where the bucket's objects are on this cluster (an OCI repository or a PersistentVolumeClaim), so gs://{bucket}/{path} artifacts can be served.",
  scope: 'Cluster',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: artifactBucketSpecSchema,
      status: artifactBucketStatusSchema,
      printerColumns: [
        { name: 'Repository', type: 'string', jsonPath: '.spec.oci.repository' },
        { name: 'Claim', type: 'string', jsonPath: '.spec.pvc.claimName' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
      validate: validateArtifactBucket,
    },
  ],
};
