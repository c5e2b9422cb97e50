/**
 * Model v1: Vertex AI's model registry as objects (google.cloud.aiplatform.v1.Model and its versions).
 * One object holds every version of a model and its aliases (docs/models.md says why, not one object per
 * version): `spec.versions` is a list keyed by `id` and `spec.versionAliases` a list keyed by `alias`, so the
 * apiserver refuses a repeated id or alias itself, and server-side apply merges one version or one alias at a
 * time (UploadModel with a parent model adds a version entry; MergeVersionAliases moves alias entries).
 *
 * A version's content never changes once created (a transition rule on each entry, which the apiserver
 * correlates by key); an alias may move. Removing a version or deleting the Model while a DeployedModel
 * serves it is refused by a ValidatingAdmissionPolicy reading `status.deployedModels` (model-policy.ts).
 */
import { z } from 'zod';
import { conditionsSchema } from '../../common/conditions.js';
import { quoted, validations } from '../../crd/cel.js';
import { containerSpecSchema } from './container-spec.js';
import { DISPLAY_NAME_MAX_CODE_POINTS, labelsSchema } from './endpoint-schema.js';

/** Vertex's version ids: "1", "2", ... (positive integers without leading zeros). */
export const MODEL_VERSION_ID = /^[1-9][0-9]{0,9}$/;
/** Vertex's alias rule (Model.version_aliases): a letter first, lowercase letter or digit last, 2..128 characters. */
export const MODEL_VERSION_ALIAS = /^[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]$/;
/** The alias every Model has: it names the version a reference without `@` deploys. */
export const DEFAULT_ALIAS = 'default';
/** Bounds the apiserver's cost estimate of the rules that look across versions and aliases. */
export const MAX_MODEL_VERSIONS = 64;
export const MAX_VERSION_ALIASES = 64;
/**
 * Where a version's files are: `gs://bucket/path` as Vertex users write it (the SDK passes only `gs://`
 * through), `oci://registry/repository:tag` (an OCI artifact served as an image volume) or
 * `pvc://claim/path` (a PersistentVolumeClaim of the namespace, mounted read-only).
 */
export const ARTIFACT_URI =
  /^(gs:\/\/[a-z0-9][a-z0-9._-]{1,220}[a-z0-9](\/.*)?|oci:\/\/[^\s]+|pvc:\/\/[a-z0-9][-a-z0-9.]*[a-z0-9](\/.*)?)$/;

const versionContentRule = {
  rule: 'self == oldSelf',
  message:
    "a version's content never changes once created (Vertex: model versions are immutable): upload a new version with a new id and move the alias to it",
  messageExpression: `'version ' + ${quoted('self.id')} + ' changed: a version\\'s content never changes once created (Vertex: model versions are immutable); upload a new version with a new id and move the alias to it'`,
} as const;

export const modelVersionSchema = z
  .object({
    id: z
      .string()
      .max(10)
      .regex(MODEL_VERSION_ID, { error: 'must be a version id: 1, 2, 3, ... (digits, no leading 0)' })
      .meta({
        description: 'id of the version, "1", "2", ... as Vertex numbers them; unique within the model; required.',
      }),
    versionDescription: z.string().max(4096).optional().meta({
      description: 'versionDescription says what this version is; optional.',
    }),
    artifactUri: z
      .string()
      .max(2048)
      .regex(ARTIFACT_URI, {
        error: 'must be gs://bucket/path (through the bucket map), oci://registry/repository:tag or pvc://claim/path',
      })
      .optional()
      .meta({
        description:
          "artifactUri is where the version's files are: gs://bucket/path (resolved by the cluster's bucket map), oci://registry/repository:tag or pvc://claim/path; the model server reads them at AIP_STORAGE_URI; optional.",
      }),
    containerSpec: containerSpecSchema.meta({
      description: 'containerSpec is the model server that serves this version (Vertex ModelContainerSpec); required.',
    }),
  })
  .meta(validations(versionContentRule));
export type ModelVersion = z.infer<typeof modelVersionSchema>;

export const versionAliasSchema = z.object({
  alias: z
    .string()
    .max(128)
    .regex(MODEL_VERSION_ALIAS, {
      error:
        'must be an alias: a lowercase letter first, then letters, digits and dashes, a lowercase letter or digit last, 2 to 128 characters',
    })
    .meta({ description: 'alias, for example default or champion; unique within the model; required.' }),
  versionId: z.string().max(10).regex(MODEL_VERSION_ID, { error: 'must be a version id: 1, 2, 3, ...' }).meta({
    description: 'versionId is the id of the version the alias names (one of spec.versions[].id); required.',
  }),
});
export type VersionAlias = z.infer<typeof versionAliasSchema>;

export const modelSpecSchema = z
  .object({
    displayName: z.string().meta({
      description: 'displayName of the model, any UTF-8, at most 128 characters (code points); required.',
      minLength: 1,
      maxLength: DISPLAY_NAME_MAX_CODE_POINTS,
    }),
    description: z.string().max(4096).optional().meta({ description: 'description of the model; optional.' }),
    labels: labelsSchema('models'),
    versions: z
      .array(modelVersionSchema)
      .min(1)
      .max(MAX_MODEL_VERSIONS)
      .meta({
        description: `versions of the model, each with its own artifact and container, immutable once created; ids unique; 1 to ${MAX_MODEL_VERSIONS}; a version a DeployedModel serves may not be removed; required.`,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['id'],
      }),
    versionAliases: z
      .array(versionAliasSchema)
      .min(1)
      .max(MAX_VERSION_ALIASES)
      .meta({
        description: `versionAliases name versions: each alias once, each naming a version of spec.versions; "${DEFAULT_ALIAS}" is required (it is what a reference without @ deploys); an alias may move, which never redeploys a running DeployedModel; required.`,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['alias'],
      }),
  })
  .meta(
    validations(
      {
        rule: `self.versionAliases.exists(a, a.alias == '${DEFAULT_ALIAS}')`,
        message: `must include the alias "${DEFAULT_ALIAS}": it names the version a DeployedModel without @version deploys`,
        fieldPath: '.versionAliases',
        reason: 'FieldValueRequired',
      },
      {
        rule: 'self.versionAliases.all(a, self.versions.exists(v, v.id == a.versionId))',
        message: 'every alias must name a version of spec.versions',
        // No messageExpression: one naming the alias is priced beyond the apiserver's budget (a 64 × 64 search);
        // the webhook and `validate` name it.
        fieldPath: '.versionAliases',
      },
    ),
  );
export type ModelSpec = z.infer<typeof modelSpecSchema>;

export const modelDeploymentSchema = z.object({
  deployedModel: z.string().meta({ description: 'deployedModel is the metadata.name of the DeployedModel; required.' }),
  endpoint: z
    .string()
    .optional()
    .meta({ description: 'endpoint is the metadata.name of its PredictionEndpoint; optional.' }),
  versionId: z.string().meta({ description: 'versionId is the version it serves; required.' }),
});
export type ModelDeployment = z.infer<typeof modelDeploymentSchema>;

export const modelStatusSchema = z.object({
  name: z.string().optional().meta({
    description: "name is the model's resource name, projects/{project}/locations/{location}/models/{name}; optional.",
  }),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ description: 'observedGeneration is the metadata.generation this status describes; optional.' }),
  versions: z
    .array(
      z.object({
        id: z.string().meta({ description: 'id of the version; required.' }),
        createTime: z.string().meta({
          description: 'createTime is when the operator first saw the version, RFC 3339; required.',
          format: 'date-time',
        }),
      }),
    )
    .optional()
    .meta({
      description: 'versions lists each version with when it was created; optional.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['id'],
    }),
  latestVersionId: z.string().optional().meta({
    description:
      'latestVersionId is the highest version id this model has ever had, kept after that version is removed, so a new version never takes the id of a deleted one (Vertex never reuses a version id); optional.',
  }),
  deployedModels: z.array(modelDeploymentSchema).optional().meta({
    description:
      'deployedModels are the DeployedModels of the namespace that serve a version of this model; while one is listed, the Model cannot be deleted nor that version removed; optional.',
  }),
  conditions: conditionsSchema('Model'),
});
export type ModelStatus = z.infer<typeof modelStatusSchema>;
