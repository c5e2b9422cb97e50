/**
 * A DeployedModel that names a Model instead of inlining one: `spec.model` is
 * `projects/{project}/locations/{location}/models/{name}[@version|@alias]` in the namespace's own project and
 * the operator's location, and the spec has neither `containerSpec` nor `backend`. Resolution gives the version
 * it serves, and the spec the serving plan runs (the version's containerSpec and artifactUri in place of the
 * inline ones): one path for both forms, resolution first. Any other DeployedModel is inline, exactly as before
 * Models existed (a `spec.model` of another project is a name, recorded, not looked up).
 *
 * Vertex deploys a version, not an alias: once resolved, the version is kept in `status.modelVersionId` (with
 * the `spec.model` it came from) and served from then on, wherever the alias moves. Pure.
 */
import type { KubeObject } from '../api/common/kube-object.js';
import { isRecord, objectKey } from '../api/common/kube-object.js';
import type { DeployedModelSpec } from '../api/prediction/v1/deployed-model-schema.js';
import { DEFAULT_ALIAS, MODEL_VERSION_ID, type ModelVersion } from '../api/prediction/v1/model-schema.js';
import { endpointProject, modelResourceName, parseModelName } from '../api/prediction/v1/names.js';
import { specOf, statusOf } from '../api/typed-spec.js';

export interface ModelScope {
  /** The `--project` template (`{namespace}` replaced by the DeployedModel's namespace). */
  readonly project: string;
  readonly location: string;
}

export type ModelResolution =
  | { readonly form: 'inline' }
  | { readonly form: 'missing-model'; readonly modelName: string; readonly objectName: string }
  | { readonly form: 'missing-version'; readonly modelName: string; readonly message: string }
  | {
      readonly form: 'resolved';
      /** `projects/{p}/locations/{l}/models/{m}` (without `@`). */
      readonly modelName: string;
      readonly objectName: string;
      readonly version: ModelVersion;
      /** The version spec.model's alias names now, when it is not the one served (the alias moved). */
      readonly aliasVersionId: string | undefined;
      /** The alias spec.model names, if it names one. */
      readonly alias: string | undefined;
    };

function present(v: unknown): boolean {
  return v !== undefined && v !== null && v !== '';
}

/** The Model object (namespace/name key) a DeployedModel refers to, or undefined for an inline one. */
export function referencedModelKey(dm: KubeObject, scope: ModelScope): string | undefined {
  const target = referenceTarget(dm, scope);
  return target === undefined ? undefined : objectKey(dm.metadata.namespace, target.objectName);
}

function referenceTarget(
  dm: KubeObject,
  scope: ModelScope,
): { objectName: string; modelName: string; at: string | undefined } | undefined {
  const spec = specOf.deployedModel(dm);
  // As written, not as decoded: an invalid inline server is still inline (and reported as InvalidSpec).
  const raw = isRecord(dm.spec) ? dm.spec : {};
  if (present(raw.containerSpec) || present(raw.backend) || spec.model === undefined) return undefined;
  const parts = parseModelName(spec.model);
  if (parts === undefined) return undefined;
  const project = endpointProject(scope.project, dm.metadata.namespace ?? '');
  if (parts.project !== project || parts.location !== scope.location) return undefined;
  return {
    objectName: parts.model,
    modelName: modelResourceName(project, scope.location, parts.model),
    at: parts.at,
  };
}

/** What `dm` serves, looking the Model up with `modelNamed` (the informer's cache). */
export function resolveModelReference(
  dm: KubeObject,
  scope: ModelScope,
  modelNamed: (namespace: string, name: string) => KubeObject | undefined,
): ModelResolution {
  const target = referenceTarget(dm, scope);
  if (target === undefined) return { form: 'inline' };
  const { modelName, objectName, at } = target;
  const model = modelNamed(dm.metadata.namespace ?? '', objectName);
  if (model === undefined) return { form: 'missing-model', modelName, objectName };
  const { versions = [], versionAliases = [] } = specOf.model(model);
  const alias = at === undefined ? DEFAULT_ALIAS : MODEL_VERSION_ID.test(at) ? undefined : at;
  const aliasTarget = alias === undefined ? undefined : versionAliases.find((a) => a.alias === alias)?.versionId;
  const previous = statusOf.deployedModel(dm);
  const pinned = previous.modelReference === specOf.deployedModel(dm).model ? previous.modelVersionId : undefined;
  const wanted = pinned ?? (alias === undefined ? at : aliasTarget);
  const version = wanted === undefined ? undefined : versions.find((v) => v.id === wanted);
  if (version === undefined) {
    const have = versions.map((v) => v.id).join(', ') || 'none';
    const message =
      pinned !== undefined
        ? `version "${pinned}" of Model "${objectName}", which this model was deployed with (status.modelVersionId), is no longer in its spec.versions (it has ${have})`
        : alias !== undefined && aliasTarget === undefined
          ? `Model "${objectName}" has no alias "${alias}" (spec.versionAliases: ${versionAliases.map((a) => a.alias).join(', ') || 'none'})`
          : `Model "${objectName}" has no version "${wanted ?? ''}" (spec.versions: ${have})`;
    return { form: 'missing-version', modelName, message };
  }
  const moved = aliasTarget !== undefined && aliasTarget !== version.id ? aliasTarget : undefined;
  return { form: 'resolved', modelName, objectName, version, aliasVersionId: moved, alias };
}

/** The spec the serving plan runs: a resolved reference's version in place of the inline fields. */
export function servedSpec(dm: KubeObject, resolution: ModelResolution): Partial<DeployedModelSpec> {
  const spec = specOf.deployedModel(dm);
  if (resolution.form !== 'resolved') return spec;
  const { containerSpec, artifactUri } = resolution.version;
  return { ...spec, containerSpec, ...(artifactUri === undefined ? {} : { artifactUri }) };
}

/** Resolves DeployedModels against the Models of the reconcilers' cache. */
export function modelResolver(
  informers: { readonly models: { get(namespace: string | undefined, name: string): KubeObject | undefined } },
  scope: ModelScope,
): (dm: KubeObject) => ModelResolution {
  return (dm) => resolveModelReference(dm, scope, (namespace, name) => informers.models.get(namespace, name));
}

/** DeployedModels by `namespace/name` of the Model their spec.model names (an index of the shard's cache). */
export const MODEL_REFERENCE_INDEX = 'byModel';
