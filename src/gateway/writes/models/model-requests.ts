/**
 * ModelService requests as Model objects, pure: ids (Vertex's rules, as Kubernetes names), the version an upload
 * adds, alias merges (`-alias` removes), the fields UpdateModel may change, and the tables that name a Model's
 * fields as the request's. The service (model-service.ts) reads and writes; everything it decides is here.
 */
import { randomInt } from 'node:crypto';
import { isRecord } from '../../../api/common/kube-object.js';
import { renderValue } from '../../../api/common/field-error.js';
import {
  DEFAULT_ALIAS,
  MODEL_VERSION_ALIAS,
  type ModelSpec,
  type ModelVersion,
  type VersionAlias,
} from '../../../api/prediction/v1/model-schema.js';
import { GoogleApiError } from '../../google-errors.js';
import type { FieldTable } from '../field-table.js';

/**
 * Vertex's model id (up to 63 of `[a-z0-9_-]`, not starting with a digit or `-`) as a Kubernetes object name can
 * hold it: no `_`, and a letter or digit last.
 */
export const MODEL_ID = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A generated id, as Vertex generates them: 19 digits. */
export function generatedModelId(): string {
  return `${randomInt(1, 10)}${Array.from({ length: 18 }, () => randomInt(0, 10)).join('')}`;
}

export function checkModelId(id: string): void {
  if (MODEL_ID.test(id)) return;
  throw GoogleApiError.badRequest([
    {
      field: 'model_id',
      description: `invalid value ${renderValue(id)}: a model id is 1 to 63 lowercase letters, digits and hyphens, starting with a letter and ending with a letter or digit (Vertex's rule, without "_", which a Kubernetes object name cannot hold)`,
    },
  ]);
}

/** The request's Model fields that an upload's object takes, keyed as the request names them. */
export const UPLOAD_FIELDS: FieldTable = {
  'metadata.name': 'model_id',
  spec: 'model',
  'spec.displayName': 'model.display_name',
  'spec.description': 'model.description',
  'spec.labels': 'model.labels',
  'spec.versions': 'model',
  'spec.versions[*]': 'model',
  'spec.versions[*].versionDescription': 'model.version_description',
  'spec.versions[*].artifactUri': 'model.artifact_uri',
  'spec.versions[*].containerSpec': 'model.container_spec',
  'spec.versionAliases': 'model.version_aliases',
  'spec.versionAliases[*]': 'model.version_aliases',
};

export const MERGE_ALIASES_FIELDS: FieldTable = {
  'spec.versionAliases': 'version_aliases',
  'spec.versionAliases[*]': 'version_aliases',
};

/**
 * Vertex's ModelContainerSpec fields this project's container spec has, under the same names (the probes take
 * Vertex's Probe shape); the validators judge their values.
 */
const CONTAINER_FIELDS = [
  'imageUri',
  'command',
  'args',
  'predictRoute',
  'healthRoute',
  'sharedMemorySizeMb',
  'deploymentTimeout',
  'startupProbe',
  'healthProbe',
  'livenessProbe',
] as const;

export function containerSpecOf(requested: unknown): Record<string, unknown> {
  if (!isRecord(requested) || typeof requested.imageUri !== 'string' || requested.imageUri === '')
    throw GoogleApiError.badRequest([
      {
        field: 'model.container_spec.image_uri',
        description:
          'required: the model server image that serves the model (Model.upload(serving_container_image_uri=...))',
      },
    ]);
  // Refused rather than dropped: a field the upload would lose silently is one the caller believes is set.
  if (Array.isArray(requested.grpcPorts) && requested.grpcPorts.length > 0)
    throw GoogleApiError.badRequest([
      {
        field: 'model.container_spec.grpc_ports',
        description:
          'not served here: the gateway calls a model server over HTTP at predict_route; leave grpc_ports unset',
      },
    ]);
  const out: Record<string, unknown> = {};
  for (const key of CONTAINER_FIELDS) if (requested[key] !== undefined) out[key] = requested[key];
  if (Array.isArray(requested.env))
    out.env = (requested.env as unknown[])
      .filter(isRecord)
      .map((e) => ({ name: e.name, ...(e.value !== undefined ? { value: e.value } : {}) }));
  if (Array.isArray(requested.ports))
    out.ports = (requested.ports as unknown[]).filter(isRecord).map((p) => ({ containerPort: p.containerPort }));
  return out;
}

function aliasesOf(requested: unknown): string[] {
  return Array.isArray(requested) ? requested.filter((a): a is string => typeof a === 'string') : [];
}

/** The version an upload creates, from the request's `model`. */
export function uploadedVersion(model: Record<string, unknown>, id: string): ModelVersion {
  const version: Record<string, unknown> = { id, containerSpec: containerSpecOf(model.containerSpec) };
  if (typeof model.versionDescription === 'string') version.versionDescription = model.versionDescription;
  if (typeof model.artifactUri === 'string') version.artifactUri = model.artifactUri;
  return version as ModelVersion;
}

/** A new Model's spec: version 1, `default` on it, and the request's other aliases. */
export function newModelSpec(model: Record<string, unknown>): ModelSpec {
  const aliases = aliasesOf(model.versionAliases).filter((a) => a !== DEFAULT_ALIAS);
  const spec: Record<string, unknown> = {
    displayName: typeof model.displayName === 'string' ? model.displayName : '',
    versions: [uploadedVersion(model, '1')],
    versionAliases: [{ alias: DEFAULT_ALIAS, versionId: '1' }, ...aliases.map((alias) => ({ alias, versionId: '1' }))],
  };
  if (typeof model.description === 'string') spec.description = model.description;
  if (isRecord(model.labels) && Object.keys(model.labels).length > 0) spec.labels = model.labels;
  return spec as ModelSpec;
}

/** The next version id: one more than the highest the model has had (its spec and its status). */
export function nextVersionId(spec: Partial<ModelSpec>, status: unknown): string {
  const seen = (spec.versions ?? []).map((v) => Number(v.id));
  if (isRecord(status) && Array.isArray(status.versions))
    for (const v of status.versions as unknown[]) if (isRecord(v)) seen.push(Number(v.id));
  // The operator keeps the highest id the model ever had (status.latestVersionId): Vertex never reuses the id of
  // a deleted version, so neither does an upload here.
  if (isRecord(status) && typeof status.latestVersionId === 'string') seen.push(Number(status.latestVersionId));
  return String(Math.max(0, ...seen.filter(Number.isFinite)) + 1);
}

/** The alias entries an upload of a new version sets: each requested alias moved to the new version. */
export function uploadedAliases(model: Record<string, unknown>, versionId: string): VersionAlias[] {
  return aliasesOf(model.versionAliases).map((alias) => ({ alias, versionId }));
}

/** MergeVersionAliases' list: `alias` moves it to the version, `-alias` removes it from the version. */
export function mergeAliases(
  current: readonly VersionAlias[],
  versionId: string,
  requested: readonly string[],
): { set: VersionAlias[]; removed: string[] } {
  const set: VersionAlias[] = [];
  const removed: string[] = [];
  requested.forEach((text, i) => {
    const remove = text.startsWith('-');
    const alias = remove ? text.slice(1) : text;
    const field = `version_aliases[${i}]`;
    if (!MODEL_VERSION_ALIAS.test(alias))
      throw GoogleApiError.badRequest([
        {
          field,
          description: `invalid value ${renderValue(text)}: an alias is a lowercase letter, then letters, digits and dashes, a lowercase letter or digit last, 2 to 128 characters; "-alias" removes one`,
        },
      ]);
    if (remove && alias === DEFAULT_ALIAS)
      throw GoogleApiError.badRequest([
        { field, description: `the alias "${DEFAULT_ALIAS}" cannot be removed: move it to another version instead` },
      ]);
    if (remove) {
      const held = current.find((a) => a.alias === alias);
      if (held === undefined || held.versionId !== versionId)
        throw GoogleApiError.badRequest([
          { field, description: `version ${versionId} has no alias "${alias}" to remove` },
        ]);
      removed.push(alias);
    } else set.push({ alias, versionId });
  });
  return { set, removed };
}

/** UpdateModel's update_mask paths (camelCase) and the Model spec field each one sets (update-mask.ts). */
export const UPDATE_MODEL_MASK: Readonly<Record<string, string>> = {
  displayName: 'displayName',
  description: 'description',
  labels: 'labels',
};
