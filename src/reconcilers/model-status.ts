/**
 * The status of a Model as a pure function of the world: the Model and the DeployedModels of its namespace that
 * name it. `status.deployedModels` is what the ValidatingAdmissionPolicy of model-policy.ts reads to refuse
 * deleting the Model, or removing a version, while a DeployedModel serves it.
 */
import type { FieldError } from '../api/common/field-error.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { Reasons, type ModelReason, type Written } from '../api/common/conditions.js';
import type { ModelDeployment, ModelStatus as StoredStatus } from '../api/prediction/v1/model-schema.js';
import { DEFAULT_ALIAS } from '../api/prediction/v1/model-schema.js';
import { endpointProject, modelResourceName } from '../api/prediction/v1/names.js';
import { specOf, statusOf } from '../api/typed-spec.js';
import type { ModelResolution } from './model-reference.js';
import { conditionsOf, invalidSpecMessage, withReadyCondition, type ReadyVerdict } from './status-common.js';

export type ModelStatus = Written<StoredStatus, 'observedGeneration' | 'conditions'>;

export interface ModelWorld {
  readonly model: KubeObject;
  readonly specErrors: readonly FieldError[];
  /** The DeployedModels of the namespace whose spec.model names this Model, each with its resolution. */
  readonly references: readonly { readonly deployedModel: KubeObject; readonly resolution: ModelResolution }[];
  readonly project: string;
  readonly location: string;
  readonly now: string;
}

export interface ModelOutcome {
  readonly status: ModelStatus;
  readonly verdict: ReadyVerdict<ModelReason>;
}

/** The version each referring DeployedModel serves: resolved, or still pinned while its version is missing. */
export function deploymentsOf(world: Pick<ModelWorld, 'references'>): ModelDeployment[] {
  const out: ModelDeployment[] = [];
  for (const { deployedModel, resolution } of world.references) {
    const versionId =
      resolution.form === 'resolved' ? resolution.version.id : statusOf.deployedModel(deployedModel).modelVersionId;
    if (versionId === undefined || resolution.form === 'inline' || resolution.form === 'missing-model') continue;
    const endpoint = specOf.deployedModel(deployedModel).endpointRef?.name;
    out.push({
      deployedModel: deployedModel.metadata.name ?? '',
      ...(endpoint === undefined ? {} : { endpoint }),
      versionId,
    });
  }
  return out.sort((a, b) => a.deployedModel.localeCompare(b.deployedModel));
}

export function computeModelStatus(world: ModelWorld): ModelOutcome {
  const { model } = world;
  const generation = model.metadata.generation ?? 0;
  const previous = statusOf.model(model);
  const spec = specOf.model(model);
  const created = new Map((previous.versions ?? []).map((v) => [v.id, v.createTime]));
  const deployments = deploymentsOf(world);
  const verdict = readyVerdict(world, deployments);
  const status: ModelStatus = {
    name: modelResourceName(
      endpointProject(world.project, model.metadata.namespace ?? ''),
      world.location,
      model.metadata.name ?? '',
    ),
    observedGeneration: generation,
    conditions: withReadyCondition(conditionsOf(model.status), verdict, generation, world.now),
    versions: (spec.versions ?? []).map((v) => ({ id: v.id, createTime: created.get(v.id) ?? world.now })),
  };
  const latest = highestVersionId([previous.latestVersionId, ...(spec.versions ?? []).map((v) => v.id)]);
  if (latest !== undefined) status.latestVersionId = latest;
  if (deployments.length > 0) status.deployedModels = deployments;
  return { status, verdict };
}

/** The highest of version ids ("1", "2", ...), compared as numbers; undefined when there is none. */
export function highestVersionId(ids: readonly (string | undefined)[]): string | undefined {
  const numbers = ids.map(Number).filter((n) => Number.isSafeInteger(n) && n > 0);
  return numbers.length === 0 ? undefined : String(Math.max(...numbers));
}

function readyVerdict(world: ModelWorld, deployments: readonly ModelDeployment[]): ReadyVerdict<ModelReason> {
  if (world.specErrors.length > 0)
    return { status: 'False', reason: Reasons.InvalidSpec, message: invalidSpecMessage(world.specErrors) };
  const spec = specOf.model(world.model);
  const versions = spec.versions ?? [];
  const defaultVersion = spec.versionAliases?.find((a) => a.alias === DEFAULT_ALIAS)?.versionId ?? '';
  const served =
    deployments.length === 0
      ? 'not deployed'
      : `deployed: ${deployments.map((d) => `DeployedModel "${d.deployedModel}" serves version ${d.versionId}`).join(', ')}`;
  return {
    status: 'True',
    reason: Reasons.Reconciled,
    message: `${versions.length} version${versions.length === 1 ? '' : 's'}, alias "${DEFAULT_ALIAS}" names version ${defaultVersion}; ${served}`,
  };
}
