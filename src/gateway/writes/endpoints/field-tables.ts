/**
 * Where a field of a written object came from in the request: object path → request field path, one small
 * declarative table per method and object, so a refusal by the project's validators or the apiserver (422, its
 * causes' `field`) names the field the caller sent, in Google's snake_case form
 * (`spec.dedicatedResources.minReplicaCount` → `deployed_model.dedicated_resources.min_replica_count`). Pure.
 */

/** Rows of [object path prefix, request path prefix]; the longest matching prefix wins. */
export type FieldTable = readonly (readonly [string, string])[];

export const CREATE_ENDPOINT_FIELDS: FieldTable = [
  ['metadata.name', 'endpoint_id'],
  ['metadata', 'endpoint'],
  ['spec', 'endpoint'],
];

/** UpdateEndpoint: the endpoint's fields, and spec.etag from the endpoint the request carries. */
export const UPDATE_ENDPOINT_FIELDS: FieldTable = [
  ['metadata', 'endpoint'],
  ['spec', 'endpoint'],
];

/** DeployModel's DeployedModel. */
export const DEPLOY_MODEL_FIELDS: FieldTable = [
  ['metadata.name', 'deployed_model.id'],
  ['spec.endpointRef', 'endpoint'],
  ['spec.endpointRef.name', 'endpoint'],
  ['spec', 'deployed_model'],
];

/** The endpoint's split, as DeployModel and UndeployModel write it. */
export const SPLIT_FIELDS: FieldTable = [['spec.trafficSplit', 'traffic_split']];

/** MutateDeployedModel's DeployedModel. */
export const MUTATE_DEPLOYED_MODEL_FIELDS: FieldTable = [
  ['spec.id', 'deployed_model.id'],
  ['spec', 'deployed_model'],
];

/** `minReplicaCount` → `min_replica_count`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `min_replica_count` → `minReplicaCount` (a FieldMask path may come in either form). */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function fits(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}

/**
 * The request's path of `objectPath` (Kubernetes' form: `spec.trafficSplit[12]`, `spec.a[0].b`); the rest after
 * the prefix is snake-cased segment by segment, map keys and list indexes kept. Undefined when no row matches.
 */
export function requestPath(table: FieldTable, objectPath: string): string | undefined {
  let best: readonly [string, string] | undefined;
  for (const row of table)
    if (fits(objectPath, row[0]) && (best === undefined || row[0].length > best[0].length)) best = row;
  if (best === undefined) return undefined;
  const rest = objectPath
    .slice(best[0].length)
    .replace(/(^|\.)([^.[\]]+)/g, (_, dot: string, word: string) => dot + snakeCase(word));
  return best[1] + rest;
}
