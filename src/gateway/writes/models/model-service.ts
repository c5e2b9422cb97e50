/**
 * google.cloud.aiplatform.v1.ModelService on Model objects (docs/models.md), over gRPC and REST (Google's paths):
 *
 *   UploadModel          POST   /v1/{parent}/models:upload           → Operation (UploadModelResponse{model, modelVersionId})
 *   GetModel             GET    /v1/{name=…/models/*}  (`@version` / `@alias`)
 *   ListModels           GET    /v1/{parent}/models    (filter, paging)
 *   ListModelVersions    GET    /v1/{name}:listVersions
 *   UpdateModel          PATCH  /v1/{model.name}       (update_mask: display_name, description, labels) → Model
 *   MergeVersionAliases  POST   /v1/{name}:mergeVersionAliases       → Model
 *   DeleteModelVersion   DELETE /v1/{name}:deleteVersion             → Operation (Empty)
 *   DeleteModel          DELETE /v1/{name}                           → Operation (Empty)
 *
 * Reads are `get`/`list` on models as the caller; writes are server-side applies under the caller's manager
 * (../apply.ts). An upload's operation is done when the Model is Ready at the generation the upload produced.
 */
import { resources } from '../../../api/kind-bindings.js';
import type { KubeObject } from '../../../api/common/kube-object.js';
import { isRecord } from '../../../api/common/kube-object.js';
import { endpointResourceName, parseModelName, PREDICTION_GROUP } from '../../../api/prediction/v1/names.js';
import { validateModel } from '../../../api/prediction/v1/model-validation.js';
import type { ModelSpec } from '../../../api/prediction/v1/model-schema.js';
import { compileResourceFilter } from '../../endpoints/filter.js';
import { GoogleApiError } from '../../google-errors.js';
import { ModelService } from '../../grpc/services.js';
import { pageOf } from '../../paging.js';
import type { ApiMethod, CallMeta } from '../api-method.js';
import { applyAsCaller, checkWritable, deleteAsCaller, removeAsCaller, type WriteObject } from '../apply.js';
import { authoriseRead, authoriseWrite, type WriteCaller } from '../caller.js';
import { badRequestOf } from '../field-table.js';
import { ownedFields, withKeyed } from '../owned-fields.js';
import type { OperationRef } from '../operations/operation-name.js';
import { GENERIC_METADATA } from '../operations/operation-message.js';
import { operationOfWrite, type OperationsContext } from '../operations/operations-service.js';
import { deletedState, reconciledState, type OperationVerb } from '../operations/verbs.js';
import type { WriteApiContext, WriteService } from '../write-service.js';
import {
  checkModelId,
  generatedModelId,
  MERGE_ALIASES_FIELDS,
  mergeAliases,
  newModelSpec,
  nextVersionId,
  UPLOAD_FIELDS,
  UPDATE_MODEL_MASK,
  uploadedAliases,
  uploadedVersion,
} from './model-requests.js';
import { clearConflicts, conflictRefusal } from '../conflicts.js';
import { clearedPaths, clearsField, maskedChanges, maskPaths, setAt } from '../update-mask.js';
import { modelSpecOf, versionAt, versionIds, vertexModel, type VertexModel } from './vertex-model.js';

const API_VERSION = `${PREDICTION_GROUP}/v1`;
const LOCATION = /^projects\/([^/@]+)\/locations\/([^/@]+)$/;

interface ModelName {
  readonly project: string;
  readonly location: string;
  readonly id: string;
  readonly at: string | undefined;
  /** Without `@`. */
  readonly resource: string;
}

function modelName(field: string, value: string): ModelName {
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

function locationOf(field: string, value: string): { project: string; location: string } {
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

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function notFound(name: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Model ${name} not found.`);
}

function writeObject(namespace: string, id: string): WriteObject {
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
function nextSpec(current: Partial<ModelSpec>, change: Partial<ModelSpec>): Partial<ModelSpec> {
  return { ...current, ...change };
}

function validate(spec: Partial<ModelSpec>, current: KubeObject | undefined, id: string, table = UPLOAD_FIELDS): void {
  const result = validateModel({ metadata: { name: id }, spec }, current, { reservedPrefixes: [] });
  const err = badRequestOf(table, result.errors);
  if (err !== undefined) throw err;
}

export function modelService(ctx: WriteApiContext, ops: OperationsContext): WriteService {
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

  function opRef(
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

  async function upload(req: Record<string, unknown>, meta: CallMeta) {
    const { project, location } = locationOf('parent', str(req.parent));
    const model = isRecord(req.model) ? req.model : {};
    const parent = str(req.parentModel);
    if (parent !== '') return uploadVersion(modelName('parent_model', parent), model, meta);
    // Vertex's rule is for a model_id the caller gives; a generated one is 19 digits, as Vertex generates them.
    const given = str(req.modelId);
    if (given !== '') checkModelId(given);
    const id = given === '' ? generatedModelId() : given;
    const name: ModelName = {
      project,
      location,
      id,
      at: undefined,
      resource: `projects/${project}/locations/${location}/models/${id}`,
    };
    const caller = await writer(name, 'createModel', meta);
    const object = writeObject(caller.namespace, id);
    const spec = newModelSpec(model);
    validate(spec, undefined, id);
    const current = await client.get(resources.models, caller.namespace, id);
    if (current !== undefined)
      throw new GoogleApiError(
        'ALREADY_EXISTS',
        `Model ${name.resource} already exists: upload a new version of it with parent_model, or choose another model_id`,
      );
    await checkWritable(client, caller.namespace, []);
    const written = await applyAsCaller(client, {
      object,
      caller,
      intent: { spec },
      fields: UPLOAD_FIELDS,
      stamp: { verb: 'upload', extra: { versionId: '1' } },
    });
    return operationOfWrite(ops, caller.namespace, opRef(name.resource, written, caller, 'upload', { versionId: '1' }));
  }

  async function uploadVersion(name: ModelName, model: Record<string, unknown>, meta: CallMeta) {
    const caller = await writer(name, 'patchModel', meta);
    const object = writeObject(caller.namespace, name.id);
    const current = await client.get(resources.models, caller.namespace, name.id);
    if (current === undefined) throw notFound(name.resource);
    await checkWritable(client, caller.namespace, [{ obj: current, described: object.described }]);
    const spec = modelSpecOf(current);
    const versionId = nextVersionId(spec, current.status);
    const version = uploadedVersion(model, versionId);
    const aliases = uploadedAliases(model, versionId);
    validate(
      nextSpec(spec, {
        versions: [...(spec.versions ?? []), version],
        versionAliases: withKeyed(spec.versionAliases, aliases, 'alias'),
      }),
      current,
      name.id,
    );
    const owned = ownedFields(current, caller.manager);
    const ownedSpec = isRecord(owned.spec) ? (owned.spec as Partial<ModelSpec>) : {};
    const intentSpec = {
      ...ownedSpec,
      versions: withKeyed(ownedSpec.versions, [version], 'id'),
      ...(aliases.length > 0 || ownedSpec.versionAliases !== undefined
        ? { versionAliases: withKeyed(ownedSpec.versionAliases, aliases, 'alias') }
        : {}),
    };
    const written = await applyAsCaller(client, {
      object,
      caller,
      intent: { ...owned, spec: intentSpec },
      fields: UPLOAD_FIELDS,
      stamp: { verb: 'upload', extra: { versionId } },
    });
    return operationOfWrite(ops, caller.namespace, opRef(name.resource, written, caller, 'upload', { versionId }));
  }

  async function getModel(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    const { obj } = await readModel(name, meta);
    const found = toVertex(obj, name.at, name.resource);
    if (found === undefined) throw notFound(str(req.name));
    return found;
  }

  async function listModels(req: Record<string, unknown>, meta: CallMeta) {
    const { project, location } = locationOf('parent', str(req.parent));
    const parent = `projects/${project}/locations/${location}`;
    const filterText = str(req.filter);
    const filter = compileResourceFilter(filterText, 'model');
    const page = {
      filter: filterText,
      pageSize: typeof req.pageSize === 'number' ? req.pageSize : undefined,
      pageToken: str(req.pageToken) || undefined,
    };
    const namespace = await authoriseRead(
      gate,
      meta.authorization,
      'listModels',
      { project, name: '', described: parent },
      () =>
        gate.auth.enabled
          ? new GoogleApiError('PERMISSION_DENIED', `Permission 'models.list' denied on resource '${parent}'`)
          : new GoogleApiError('NOT_FOUND', `${parent} not found.`),
    );
    const { items } = await client.list(resources.models, namespace);
    const models = items
      .map((obj) => toVertex(obj, undefined, `${parent}/models/${obj.metadata.name ?? ''}`))
      .filter((m): m is VertexModel => m !== undefined)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const { page: found, nextPageToken } = pageOf(models, (m) => m.name, filter, page);
    return {
      ...(found.length > 0 ? { models: found } : {}),
      ...(nextPageToken !== undefined ? { nextPageToken } : {}),
    };
  }

  async function listVersions(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    const { obj } = await readModel(name, meta);
    const filterText = str(req.filter);
    const filter = compileResourceFilter(filterText, 'model');
    const page = {
      filter: filterText,
      pageSize: typeof req.pageSize === 'number' ? req.pageSize : undefined,
      pageToken: str(req.pageToken) || undefined,
    };
    const versions = versionIds(modelSpecOf(obj))
      .map((id) => toVertex(obj, id, name.resource))
      .filter((m): m is VertexModel => m !== undefined);
    const key = (m: VertexModel) => m.versionId.padStart(10, '0');
    const { page: found, nextPageToken } = pageOf(versions, key, filter, page);
    return {
      ...(found.length > 0 ? { models: found } : {}),
      ...(nextPageToken !== undefined ? { nextPageToken } : {}),
    };
  }

  async function updateModel(req: Record<string, unknown>, meta: CallMeta) {
    const model = isRecord(req.model) ? req.model : {};
    const name = modelName('model.name', str(model.name));
    const { changes, violations } = maskedChanges(model, maskPaths(req.updateMask), UPDATE_MODEL_MASK);
    if (violations.length > 0) throw GoogleApiError.badRequest(violations);
    const caller = await writer(name, 'patchModel', meta);
    const object = writeObject(caller.namespace, name.id);
    const current = await client.get(resources.models, caller.namespace, name.id);
    if (current === undefined) throw notFound(name.resource);
    await checkWritable(client, caller.namespace, [{ obj: current, described: object.described }]);
    const kept = clearConflicts(current, clearedPaths(changes));
    if (kept.length > 0) throw conflictRefusal(object.described, kept);
    const after: Record<string, unknown> = { ...modelSpecOf(current) };
    const owned = ownedFields(current, caller.manager);
    const spec: Record<string, unknown> = isRecord(owned.spec) ? { ...owned.spec } : {};
    for (const [path, value] of changes) {
      // A cleared field is left out of the intent: server-side apply then removes it where this caller owned it.
      const cleared = clearsField(value);
      setAt(after, path, cleared ? undefined : value);
      setAt(spec, path, cleared ? undefined : value);
    }
    validate(after, current, name.id);
    const written = await applyAsCaller(client, {
      object,
      caller,
      intent: { ...owned, spec },
      fields: UPLOAD_FIELDS,
      stamp: { verb: 'update' },
    });
    const answer = toVertex(written, name.at, name.resource);
    if (answer === undefined) throw notFound(str(model.name));
    return answer;
  }

  async function mergeVersionAliases(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    if (name.at === undefined)
      throw GoogleApiError.badRequest([
        {
          field: 'name',
          description: 'must name a version: projects/{p}/locations/{l}/models/{model}@{version id or alias}',
        },
      ]);
    const requested = Array.isArray(req.versionAliases) ? req.versionAliases.map(String) : [];
    const caller = await writer(name, 'patchModel', meta);
    const object = writeObject(caller.namespace, name.id);
    const current = await client.get(resources.models, caller.namespace, name.id);
    const spec = current === undefined ? {} : modelSpecOf(current);
    const version = versionAt(spec, name.at);
    if (current === undefined || version === undefined) throw notFound(str(req.name));
    await checkWritable(client, caller.namespace, [{ obj: current, described: object.described }]);
    const { set, removed } = mergeAliases(spec.versionAliases ?? [], version.id, requested);
    const after = withKeyed(spec.versionAliases, set, 'alias').filter((a) => !removed.includes(a.alias));
    validate(nextSpec(spec, { versionAliases: after }), current, name.id, MERGE_ALIASES_FIELDS);
    let written = current;
    if (set.length > 0) {
      const owned = ownedFields(current, caller.manager);
      const ownedSpec = isRecord(owned.spec) ? (owned.spec as Partial<ModelSpec>) : {};
      const versionAliases = withKeyed(ownedSpec.versionAliases, set, 'alias').filter(
        (a) => !removed.includes(a.alias),
      );
      written = await applyAsCaller(client, {
        object,
        caller,
        intent: { ...owned, spec: { ...ownedSpec, versionAliases } },
        fields: MERGE_ALIASES_FIELDS,
        stamp: { verb: 'update' },
      });
    }
    const left = removed.filter((alias) => modelSpecOf(written).versionAliases?.some((a) => a.alias === alias));
    if (left.length > 0)
      written = await removeAsCaller(client, {
        object,
        caller,
        current: written,
        entries: left.map((alias) => ({ path: ['spec', 'versionAliases'], key: 'alias', value: alias })),
        fields: MERGE_ALIASES_FIELDS,
      });
    const answer = toVertex(written, version.id, name.resource);
    if (answer === undefined) throw notFound(str(req.name));
    return answer;
  }

  async function deleteVersion(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    if (name.at === undefined || !/^[0-9]+$/.test(name.at))
      throw GoogleApiError.badRequest([
        {
          field: 'name',
          description: 'must name a version by its id: projects/{p}/locations/{l}/models/{model}@{version id}',
        },
      ]);
    const caller = await writer(name, 'patchModel', meta);
    const object = writeObject(caller.namespace, name.id);
    const current = await client.get(resources.models, caller.namespace, name.id);
    const spec = current === undefined ? {} : modelSpecOf(current);
    if (current === undefined || versionAt(spec, name.at) === undefined) throw notFound(str(req.name));
    await checkWritable(client, caller.namespace, [{ obj: current, described: object.described }]);
    const aliases = (spec.versionAliases ?? []).filter((a) => a.versionId === name.at).map((a) => a.alias);
    if (aliases.includes('default'))
      throw new GoogleApiError(
        'FAILED_PRECONDITION',
        `version ${name.at} of ${name.resource} has the alias "default": move "default" to another version (MergeVersionAliases) before deleting it`,
      );
    if ((spec.versions ?? []).length <= 1)
      throw new GoogleApiError(
        'FAILED_PRECONDITION',
        `version ${name.at} is the only version of ${name.resource}: delete the model instead`,
      );
    await removeAsCaller(client, {
      object,
      caller,
      current,
      entries: [
        { path: ['spec', 'versions'], key: 'id', value: name.at },
        ...aliases.map((alias) => ({ path: ['spec', 'versionAliases'], key: 'alias', value: alias })),
      ],
      fields: UPLOAD_FIELDS,
    });
    return operationOfWrite(ops, caller.namespace, {
      resource: name.resource,
      verb: 'deleteVersion',
      manager: caller.manager,
      extra: { versionId: name.at },
    });
  }

  async function deleteModel(req: Record<string, unknown>, meta: CallMeta) {
    const name = modelName('name', str(req.name));
    if (name.at !== undefined)
      throw GoogleApiError.badRequest([
        {
          field: 'name',
          description: 'DeleteModel deletes every version: name the model without @ (DeleteModelVersion deletes one)',
        },
      ]);
    const caller = await writer(name, 'deleteModel', meta);
    const deleted = await deleteAsCaller(client, {
      object: writeObject(caller.namespace, name.id),
      caller,
      fields: UPLOAD_FIELDS,
    });
    return operationOfWrite(ops, caller.namespace, {
      resource: name.resource,
      verb: 'delete',
      manager: caller.manager,
      ...(deleted.metadata.uid !== undefined ? { uid: deleted.metadata.uid } : {}),
    });
  }

  const verbs: OperationVerb[] = [
    {
      verb: 'upload',
      metadataType: 'google.cloud.aiplatform.v1.UploadModelOperationMetadata',
      responseType: 'google.cloud.aiplatform.v1.UploadModelResponse',
      derive: async ({ ref, read }) => {
        const { id } = modelName('name', ref.resource);
        const obj = await read(resources.models, id);
        const state = reconciledState(obj, ref.generation ?? 0, `Model ${ref.resource}`);
        if (state !== 'ready') return state;
        return {
          done: true,
          response: { model: ref.resource, modelVersionId: ref.extra?.versionId ?? '' },
          object: obj,
        };
      },
    },
    {
      verb: 'deleteVersion',
      metadataType: 'google.cloud.aiplatform.v1.DeleteOperationMetadata',
      responseType: 'google.protobuf.Empty',
      derive: async ({ ref, read }) => {
        const obj = await read(resources.models, modelName('name', ref.resource).id);
        const gone = obj === undefined || versionAt(modelSpecOf(obj), ref.extra?.versionId) === undefined;
        return gone ? { done: true, response: {}, object: obj } : { done: false, object: obj };
      },
    },
    {
      verb: 'delete',
      metadataType: 'google.cloud.aiplatform.v1.DeleteOperationMetadata',
      responseType: 'google.protobuf.Empty',
      derive: async ({ ref, read }) =>
        deletedState(await read(resources.models, modelName('name', ref.resource).id), ref.uid),
    },
    {
      // UpdateModel and MergeVersionAliases answer the Model at once; ListOperations still lists them.
      verb: 'update',
      metadataType: GENERIC_METADATA,
      responseType: 'google.cloud.aiplatform.v1.Model',
      derive: async ({ ref, read }) => {
        const obj = await read(resources.models, modelName('name', ref.resource).id);
        const state = reconciledState(obj, ref.generation ?? 0, `Model ${ref.resource}`);
        if (state !== 'ready' || obj === undefined) return state === 'ready' ? { done: false } : state;
        return { done: true, response: { ...toVertex(obj, undefined, ref.resource) }, object: obj };
      },
    },
  ];

  const location = '/v1/{parent=projects/*/locations/*}';
  const model = '/v1/{name=projects/*/locations/*/models/*}';
  const methods: ApiMethod[] = [
    {
      service: ModelService,
      name: 'UploadModel',
      http: [{ method: 'POST', path: `${location}/models:upload`, body: '*' }],
      call: upload,
    },
    { service: ModelService, name: 'GetModel', http: [{ method: 'GET', path: model }], call: getModel },
    {
      service: ModelService,
      name: 'ListModels',
      http: [{ method: 'GET', path: `${location}/models` }],
      call: listModels,
    },
    {
      service: ModelService,
      name: 'ListModelVersions',
      http: [{ method: 'GET', path: `${model}:listVersions` }],
      call: listVersions,
    },
    {
      service: ModelService,
      name: 'UpdateModel',
      http: [{ method: 'PATCH', path: '/v1/{model.name=projects/*/locations/*/models/*}', body: 'model' }],
      call: updateModel,
    },
    {
      service: ModelService,
      name: 'MergeVersionAliases',
      http: [{ method: 'POST', path: `${model}:mergeVersionAliases`, body: '*' }],
      call: mergeVersionAliases,
    },
    {
      service: ModelService,
      name: 'DeleteModelVersion',
      http: [{ method: 'DELETE', path: `${model}:deleteVersion` }],
      call: deleteVersion,
    },
    { service: ModelService, name: 'DeleteModel', http: [{ method: 'DELETE', path: model }], call: deleteModel },
  ];
  return { methods, verbs };
}
