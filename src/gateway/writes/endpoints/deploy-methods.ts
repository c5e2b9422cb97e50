/**
 * EndpointService's writes of what an endpoint serves, each a write of DeployedModels (by reference to a Model,
 * issue 47's form) and of the endpoint's spec.trafficSplit:
 *
 *   DeployModel          POST /v1/{endpoint=projects/*\/locations/*\/endpoints/*}:deployModel          → Operation
 *   UndeployModel        POST /v1/{endpoint=projects/*\/locations/*\/endpoints/*}:undeployModel        → Operation
 *   MutateDeployedModel  POST /v1/{endpoint=projects/*\/locations/*\/endpoints/*}:mutateDeployedModel  → Operation
 *
 * Nothing is half-written: a write of two objects dry-runs both (admission, conflicts), then writes them, and undoes
 * the first if the second fails. DeployModel writes the DeployedModel first, then the split that gives it traffic;
 * UndeployModel moves the split first, then deletes the DeployedModel (the operator's finalizer holds a
 * DeployedModel that still has traffic).
 */
import { defaultValidationOptions } from '../../../api/common/kind.js';
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { validateDeployedModel } from '../../../api/prediction/v1/deployed-model-validation.js';
import { GoogleApiError, type FieldViolation } from '../../google-errors.js';
import { EndpointService } from '../../grpc/services.js';
import type { ApiMethod } from '../api-method.js';
import { applyAsCaller, checkWritable, deleteAsCaller } from '../apply.js';
import { authoriseWrite, type WriteCaller } from '../caller.js';
import { violationsOfFieldErrors } from '../field-table.js';
import { ownedFields } from '../owned-fields.js';
import { checkModelReference } from './deployed-model-reference.js';
import { SPLIT_EXTRA, WATCHED_GENERATION_EXTRA, writeOperation } from './endpoint-operations.js';
import {
  deployedIdOf,
  deployedModelObject,
  deployedModelsOf,
  endpointObject,
  endpointTarget,
  readEndpoint,
  type EndpointTarget,
  type EndpointWritesContext,
} from './endpoint-target.js';
import { DEPLOY_MODEL_FIELDS, MUTATE_DEPLOYED_MODEL_FIELDS, SPLIT_FIELDS } from './field-tables.js';
import { deployedModelIdProblem, deployedModelObjectName, generateDeployedModelId } from './ids.js';
import { deploySplit, undeploySplit, type Split } from './split.js';
import { deployedModelSpecFromRequest, MUTATE_DEPLOYED_MODEL_MASK } from './translate.js';
import { clearedPaths, maskedChanges, maskPaths, setAt } from '../update-mask.js';
import { clearConflicts, conflictRefusal } from '../conflicts.js';

type Json = Record<string, unknown>;
type Call = (
  ctx: EndpointWritesContext,
  req: Json,
  signal: AbortSignal,
  authorization: string | undefined,
) => Promise<unknown>;

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function splitOf(v: unknown): Split {
  return isRecord(v) ? (Object.fromEntries(Object.entries(v).map(([k, n]) => [k, Number(n)])) as Split) : {};
}

function definedIds(models: readonly KubeObject[]): Set<string> {
  return new Set(models.map(deployedIdOf).filter((id): id is string => id !== undefined));
}

function scopeOf(target: EndpointTarget) {
  return { project: target.project, name: target.endpoint, described: target.name };
}

/** The caller's intent for the endpoint: what its manager owns now, with `split` (spec.etag left out: it is stale once the split moves). */
function splitIntent(pe: KubeObject, caller: WriteCaller, split: Split | undefined): Json {
  const intent: Json = { ...ownedFields(pe, caller.manager) };
  const spec: Json = isRecord(intent.spec) ? { ...intent.spec } : {};
  setAt(spec, ['trafficSplit'], split);
  setAt(spec, ['etag'], undefined);
  intent.spec = spec;
  return intent;
}

function refuseIfDeleting(pe: KubeObject, target: EndpointTarget): void {
  const since = pe.metadata.deletionTimestamp;
  if (since !== undefined)
    throw new GoogleApiError(
      'FAILED_PRECONDITION',
      `Endpoint ${JSON.stringify(target.name)} is being deleted (since ${since}): deploy to another endpoint, or create it again once it is gone.`,
    );
}

const deployModel: Call = async (ctx, req, signal, authorization) => {
  const target = endpointTarget('endpoint', text(req.endpoint));
  const deployed = isRecord(req.deployedModel) ? req.deployedModel : {};
  const requested = splitOf(req.trafficSplit);
  const caller = await authoriseWrite(ctx.gate, authorization, 'createDeployedModel', scopeOf(target));
  if (Object.keys(requested).length > 0)
    await authoriseWrite(ctx.gate, authorization, 'patchPredictionEndpoint', scopeOf(target));
  const { namespace } = caller;
  const pe = await readEndpoint(ctx, namespace, target, signal);
  refuseIfDeleting(pe, target);
  const peObject = endpointObject(namespace, target.endpoint);
  await checkWritable(ctx.client, namespace, [{ obj: pe, described: peObject.described }]);
  const models = await deployedModelsOf(ctx, namespace, target.endpoint, signal);
  const taken = definedIds(models);
  const givenId = text(deployed.id);
  const violations: FieldViolation[] = [];
  const idProblem = givenId === '' ? undefined : deployedModelIdProblem(givenId);
  if (idProblem !== undefined)
    violations.push({
      field: 'deployed_model.id',
      description: `${JSON.stringify(givenId.slice(0, 80))}: ${idProblem}`,
    });
  else if (taken.has(givenId))
    throw new GoogleApiError(
      'ALREADY_EXISTS',
      `Endpoint ${JSON.stringify(target.name)} already has a deployed model with id ${givenId}: give another deployed_model.id, or none.`,
    );
  const id = givenId === '' || idProblem !== undefined ? generateDeployedModelId(taken, ctx.random) : givenId;
  const dmName = deployedModelObjectName(target.endpoint, id);
  const dmObject = deployedModelObject(namespace, dmName);
  const translated = deployedModelSpecFromRequest(deployed, target.endpoint, id);
  const errors = validateDeployedModel(
    {
      apiVersion: dmObject.apiVersion,
      kind: dmObject.kind,
      metadata: { name: dmName, namespace },
      spec: translated.spec,
    },
    undefined,
    defaultValidationOptions,
  ).errors;
  const change = deploySplit(requested, id, taken);
  violations.push(
    ...translated.violations,
    ...violationsOfFieldErrors(DEPLOY_MODEL_FIELDS, errors),
    ...change.violations,
  );
  if (violations.length > 0) throw GoogleApiError.badRequest(violations);
  await checkModelReference(ctx, namespace, target, text(deployed.model), signal);
  if ((await ctx.client.get(dmObject.resource, namespace, dmName, { signal })) !== undefined)
    throw new GoogleApiError('ALREADY_EXISTS', `${dmObject.described} already exists: give another deployed_model.id.`);
  const dmWrite = { object: dmObject, caller, intent: { spec: translated.spec }, fields: DEPLOY_MODEL_FIELDS };
  const splitExtra = change.split === undefined ? '' : JSON.stringify(change.split);
  // The endpoint's write carries the operation's stamp (ListOperations reads it back), the DeployedModel's generation in it.
  const splitWrite = (dm: KubeObject, dryRun: boolean) =>
    change.split === undefined
      ? undefined
      : applyAsCaller(ctx.client, {
          object: peObject,
          caller,
          intent: splitIntent(pe, caller, change.split),
          fields: SPLIT_FIELDS,
          dryRun,
          stamp: { verb: 'deployModel', object: dmName, extra: extraOf(splitExtra, dm) },
        });
  await splitWrite(await applyAsCaller(ctx.client, { ...dmWrite, dryRun: true }), true);
  const written = await applyAsCaller(ctx.client, dmWrite);
  try {
    await splitWrite(written, false);
  } catch (err) {
    // Undo the first write: no DeployedModel stays behind a split that was never written.
    await ctx.client
      .delete(dmObject.resource, namespace, dmName, { preconditions: { uid: written.metadata.uid ?? '' } })
      .catch(() => undefined);
    throw err;
  }
  return writeOperation(ctx, caller.namespace, target.name, 'deployModel', written, caller.manager, {
    watched: dmName,
    extra: extraOf(splitExtra, written),
  });
};

function extraOf(split: string, dm: KubeObject): Record<string, string> {
  return { [SPLIT_EXTRA]: split, [WATCHED_GENERATION_EXTRA]: String(dm.metadata.generation ?? 1) };
}

function findDeployed(models: readonly KubeObject[], id: string, target: EndpointTarget): KubeObject {
  const dm = models.find((m) => deployedIdOf(m) === id);
  if (dm === undefined)
    throw new GoogleApiError(
      'NOT_FOUND',
      `Endpoint ${JSON.stringify(target.name)} has no deployed model ${JSON.stringify(id)} (deployed: ${[...definedIds(models)].join(', ') || 'none'}).`,
    );
  return dm;
}

const undeployModel: Call = async (ctx, req, signal, authorization) => {
  const target = endpointTarget('endpoint', text(req.endpoint));
  const id = text(req.deployedModelId);
  if (id === '') throw GoogleApiError.badRequest([{ field: 'deployed_model_id', description: 'required' }]);
  const caller = await authoriseWrite(ctx.gate, authorization, 'deleteDeployedModel', scopeOf(target));
  const { namespace } = caller;
  const pe = await readEndpoint(ctx, namespace, target, signal);
  const peObject = endpointObject(namespace, target.endpoint);
  const models = await deployedModelsOf(ctx, namespace, target.endpoint, signal);
  const dm = findDeployed(models, id, target);
  const dmObject = deployedModelObject(namespace, dm.metadata.name ?? '');
  await checkWritable(ctx.client, namespace, [
    { obj: pe, described: peObject.described },
    { obj: dm, described: dmObject.described },
  ]);
  const remaining = definedIds(models);
  remaining.delete(id);
  const current = isRecord(pe.spec) && isRecord(pe.spec.trafficSplit) ? splitOf(pe.spec.trafficSplit) : undefined;
  const change = undeploySplit(current, splitOf(req.trafficSplit), id, remaining);
  if (change.violations.length > 0) throw GoogleApiError.badRequest([...change.violations]);
  if (change.stillServing !== undefined) throw new GoogleApiError('FAILED_PRECONDITION', change.stillServing);
  if (change.split !== undefined)
    await authoriseWrite(ctx.gate, authorization, 'patchPredictionEndpoint', scopeOf(target));
  const splitWrite =
    change.split === undefined
      ? undefined
      : {
          object: peObject,
          caller,
          intent: splitIntent(pe, caller, change.split),
          fields: SPLIT_FIELDS,
          stamp: { verb: 'undeployModel', object: dmObject.name },
        };
  const dmDelete = { object: dmObject, caller, fields: DEPLOY_MODEL_FIELDS };
  if (splitWrite !== undefined) await applyAsCaller(ctx.client, { ...splitWrite, dryRun: true });
  await deleteAsCaller(ctx.client, { ...dmDelete, dryRun: true });
  if (splitWrite !== undefined) await applyAsCaller(ctx.client, splitWrite);
  let deleted: KubeObject;
  try {
    deleted = await deleteAsCaller(ctx.client, dmDelete);
  } catch (err) {
    // Undo the first write: the split goes back to what it was.
    if (splitWrite !== undefined)
      await applyAsCaller(ctx.client, { ...splitWrite, intent: splitIntent(pe, caller, current) }).catch(
        () => undefined,
      );
    throw err;
  }
  return writeOperation(ctx, caller.namespace, target.name, 'undeployModel', deleted, caller.manager, {
    watched: dmObject.name,
    deleted: true,
  });
};

const mutateDeployedModel: Call = async (ctx, req, signal, authorization) => {
  const target = endpointTarget('endpoint', text(req.endpoint));
  const deployed = isRecord(req.deployedModel) ? req.deployedModel : {};
  const id = text(deployed.id);
  if (id === '')
    throw GoogleApiError.badRequest([
      { field: 'deployed_model.id', description: 'required: the id of the deployed model to change' },
    ]);
  const caller = await authoriseWrite(ctx.gate, authorization, 'patchDeployedModel', scopeOf(target));
  const { namespace } = caller;
  const pe = await readEndpoint(ctx, namespace, target, signal);
  const dm = findDeployed(await deployedModelsOf(ctx, namespace, target.endpoint, signal), id, target);
  const dmObject = deployedModelObject(namespace, dm.metadata.name ?? '');
  await checkWritable(ctx.client, namespace, [
    { obj: pe, described: endpointObject(namespace, target.endpoint).described },
    { obj: dm, described: dmObject.described },
  ]);
  const { changes, violations } = maskedChanges(deployed, maskPaths(req.updateMask), MUTATE_DEPLOYED_MODEL_MASK);
  if (violations.length > 0) throw GoogleApiError.badRequest(violations);
  const kept = clearConflicts(dm, clearedPaths(changes));
  if (kept.length > 0) throw conflictRefusal(dmObject.described, kept);
  const after: Json = structuredClone(isRecord(dm.spec) ? dm.spec : {});
  const owned = ownedFields(dm, caller.manager);
  const intentSpec: Json = isRecord(owned.spec) ? { ...owned.spec } : {};
  for (const [path, value] of changes) {
    setAt(after, path, value);
    setAt(intentSpec, path, value);
  }
  const errors = validateDeployedModel({ ...dm, spec: after }, dm, defaultValidationOptions).errors;
  if (errors.length > 0) throw GoogleApiError.badRequest(violationsOfFieldErrors(MUTATE_DEPLOYED_MODEL_FIELDS, errors));
  const written = await applyAsCaller(ctx.client, {
    object: dmObject,
    caller,
    intent: { ...owned, spec: intentSpec },
    fields: MUTATE_DEPLOYED_MODEL_FIELDS,
  });
  return writeOperation(ctx, caller.namespace, target.name, 'mutateDeployedModel', written, caller.manager, {
    watched: dmObject.name,
  });
};

const ENDPOINT_VERB_PATH = '/v1/{endpoint=projects/*/locations/*/endpoints/*}';

/** DeployModel, UndeployModel, MutateDeployedModel, with the http rules of endpoint_service.proto. */
export function deployMethods(ctx: EndpointWritesContext): ApiMethod[] {
  const method = (name: string, verb: string, fn: Call): ApiMethod => ({
    service: EndpointService,
    name,
    http: [{ method: 'POST', path: `${ENDPOINT_VERB_PATH}:${verb}`, body: '*' }],
    call: (req, meta) => fn(ctx, req, meta.signal, meta.authorization),
  });
  return [
    method('DeployModel', 'deployModel', deployModel),
    method('UndeployModel', 'undeployModel', undeployModel),
    method('MutateDeployedModel', 'mutateDeployedModel', mutateDeployedModel),
  ];
}
