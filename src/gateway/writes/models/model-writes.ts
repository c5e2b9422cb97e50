/**
 * ModelService's writes, each a server-side apply (or delete) under the caller's manager (../apply.ts): UploadModel
 * (a new Model, or a version with parent_model), UpdateModel, MergeVersionAliases, DeleteModelVersion, DeleteModel.
 */
import { resources } from '../../../api/kind-bindings.js';
import { isRecord } from '../../../api/common/kube-object.js';
import type { ModelSpec } from '../../../api/prediction/v1/model-schema.js';
import { GoogleApiError } from '../../google-errors.js';
import type { CallMeta } from '../api-method.js';
import { applyAsCaller, checkWritable, deleteAsCaller, removeAsCaller } from '../apply.js';
import { ownedFields, withKeyed } from '../owned-fields.js';
import { operationOfWrite, type OperationsContext } from '../operations/operations-service.js';
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
import { modelSpecOf, versionAt } from './vertex-model.js';
import type { WriteApiContext } from '../write-service.js';
import {
  type ModelName,
  modelName,
  locationOf,
  str,
  notFound,
  writeObject,
  nextSpec,
  validate,
  modelAccess,
  opRef,
} from './model-target.js';

export function modelWrites(ctx: WriteApiContext, ops: OperationsContext) {
  const { client } = ctx;
  const { toVertex, writer } = modelAccess(ctx);

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

  return { upload, updateModel, mergeVersionAliases, deleteVersion, deleteModel };
}
