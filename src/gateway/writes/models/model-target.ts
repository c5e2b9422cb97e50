/**
 * What ModelService's methods share (model-service.ts lists them): Model resource names read from requests, the
 * object a write names, the validators' verdict as BadRequest, and reads and authority as the caller.
 */
import { resources } from '../../../api/kind-bindings.js';
import type { KubeObject } from '../../../api/common/kube-object.js';
import { isRecord } from '../../../api/common/kube-object.js';
import { endpointResourceName, parseModelName, PREDICTION_GROUP } from '../../../api/prediction/v1/names.js';
import { validateModel } from '../../../api/prediction/v1/model-validation.js';
import type { ModelSpec } from '../../../api/prediction/v1/model-schema.js';
import { GoogleApiError } from '../../google-errors.js';
import type { CallMeta } from '../api-method.js';
import type { WriteObject } from '../apply.js';
import { authoriseRead, authoriseWrite, type WriteCaller } from '../caller.js';
import { badRequestOf } from '../field-table.js';
import type { OperationRef } from '../operations/operation-name.js';
import { UPLOAD_FIELDS } from './model-requests.js';
import { modelSpecOf, versionAt, vertexModel, type VertexModel } from './vertex-model.js';
import type { WriteApiContext } from '../write-service.js';

const API_VERSION = `${PREDICTION_GROUP}/v1`;
const LOCATION = /^projects\/([^/@]+)\/locations\/([^/@]+)$/;

export interface ModelName {
  readonly project: string;
  readonly location: string;
  readonly id: string;
  readonly at: string | undefined;
  /** Without `@`. */
  readonly resource: string;
}

export function modelName(field: string, value: string): ModelName {
  const parts = parseModelName(value);
  if (parts === undefined)
    throw GoogleApiError.badRequest([
      {
        field,
        description: `invalid value ${JSON.stringify(value.slice(0, 256))}: it must be projects/{project}/locations/{location}/models/{model}, optionally @{version id or alias}`,
      },
    ]);
  const resource = `projects/${parts.project}/locations/${parts.location}/models/${parts.model}`;
  return { project: parts.project, location: parts.location, id: parts.model, at: parts.at, resource };
}

export function locationOf(field: string, value: string): { project: string; location: string } {
  const m = LOCATION.exec(value);
  if (m === null)
    throw GoogleApiError.badRequest([
      {
        field,
        description: `invalid value ${JSON.stringify(value.slice(0, 256))}: it must be projects/{project}/locations/{location}`,
      },
    ]);
  return { project: m[1] ?? '', location: m[2] ?? '' };
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function notFound(name: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Model ${name} not found.`);
}

export function writeObject(namespace: string, id: string): WriteObject {
  return {
    resource: resources.models,
    apiVersion: API_VERSION,
    kind: 'Model',
    namespace,
    name: id,
    described: `Model "${id}" in namespace "${namespace}"`,
  };
}

/** The spec the object will have once `change` is made to the current one (for the validators). */
export function nextSpec(current: Partial<ModelSpec>, change: Partial<ModelSpec>): Partial<ModelSpec> {
  return { ...current, ...change };
}

export function validate(
  spec: Partial<ModelSpec>,
  current: KubeObject | undefined,
  id: string,
  table = UPLOAD_FIELDS,
): void {
  const result = validateModel({ metadata: { name: id }, spec }, current, { reservedPrefixes: [] });
  const err = badRequestOf(table, result.errors);
  if (err !== undefined) throw err;
}

/** What every ModelService method reads through: the Vertex shape of a Model, a read as the caller, a writer's authority. */
export function modelAccess(ctx: WriteApiContext) {
  const { client, gate } = ctx;

  function toVertex(obj: KubeObject, at: string | undefined, resource: string): VertexModel | undefined {
    const version = versionAt(modelSpecOf(obj), at);
    if (version === undefined) return undefined;
    const [, project = '', , location = ''] = resource.split('/');
    const namespace = obj.metadata.namespace ?? '';
    return vertexModel(obj, version, resource, (name) => {
      const dm = ctx.routing.deployedModel(namespace, name);
      if (dm === undefined || !isRecord(dm.spec)) return undefined;
      const ref = isRecord(dm.spec.endpointRef) ? str(dm.spec.endpointRef.name) : '';
      const id = isRecord(dm.status) && typeof dm.status.id === 'string' ? dm.status.id : str(dm.spec.id);
      return ref === '' || id === '' ? undefined : { endpoint: endpointResourceName(project, location, ref), id };
    });
  }

  async function readModel(name: ModelName, meta: CallMeta): Promise<{ obj: KubeObject; namespace: string }> {
    const namespace = await authoriseRead(
      gate,
      meta.authorization,
      'getModel',
      { project: name.project, name: name.id, described: name.resource },
      () => notFound(name.resource),
    );
    const obj = await client.get(resources.models, namespace, name.id);
    if (obj === undefined) throw notFound(name.resource);
    return { obj, namespace };
  }

  async function writer(
    name: ModelName,
    call: 'createModel' | 'patchModel' | 'deleteModel',
    meta: CallMeta,
  ): Promise<WriteCaller> {
    return authoriseWrite(gate, meta.authorization, call, {
      project: name.project,
      name: name.id,
      described: name.resource,
    });
  }

  return { toVertex, readModel, writer };
}

export function opRef(
  resource: string,
  written: KubeObject,
  caller: WriteCaller,
  verb: string,
  extra?: Record<string, string>,
): OperationRef {
  return {
    resource,
    verb,
    manager: caller.manager,
    ...(written.metadata.generation !== undefined ? { generation: written.metadata.generation } : {}),
    ...(extra !== undefined ? { extra } : {}),
  };
}
