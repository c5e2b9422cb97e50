/**
 * EndpointService's writes of the endpoint itself, each a write of a PredictionEndpoint:
 *
 *   CreateEndpoint  POST   /v1/{parent=projects/*\/locations/*}/endpoints?endpointId   → Operation (Endpoint)
 *   UpdateEndpoint  PATCH  /v1/{endpoint.name=projects/*\/locations/*\/endpoints/*}?updateMask → Endpoint
 *   DeleteEndpoint  DELETE /v1/{name=projects/*\/locations/*\/endpoints/*}               → Operation (Empty)
 *
 * A DeleteEndpoint of an endpoint with deployed models is answered as Vertex answers it, FAILED_PRECONDITION naming
 * them, before anything is written (the operator's finalizer would otherwise hold the deletion half-done).
 */
import { defaultValidationOptions } from '../../../api/common/kind.js';
import { isRecord, type KubeObject } from '../../../api/common/kube-object.js';
import { validatePredictionEndpoint } from '../../../api/prediction/v1/endpoint-validation.js';
import { trafficSplitProblems } from '../../../api/prediction/v1/traffic.js';
import { GoogleApiError } from '../../google-errors.js';
import { EndpointService } from '../../grpc/services.js';
import { nameParts } from '../../grpc/read-services.js';
import type { ApiMethod } from '../api-method.js';
import { applyAsCaller, checkWritable, deleteAsCaller } from '../apply.js';
import { authoriseWrite } from '../caller.js';
import { badRequestOf, requestField } from '../field-table.js';
import { ownedFields } from '../owned-fields.js';
import {
  deployedIdOf,
  deployedModelsOf,
  endpointAnswer,
  endpointObject,
  endpointTarget,
  LOCATION_PATTERN,
  readEndpoint,
  type EndpointWritesContext,
} from './endpoint-target.js';
import { writeOperation } from './endpoint-operations.js';
import { CREATE_ENDPOINT_FIELDS, UPDATE_ENDPOINT_FIELDS } from './field-tables.js';
import { endpointIdProblem, generateEndpointId } from './ids.js';
import { endpointSpecFromRequest, UPDATE_ENDPOINT_MASK } from './translate.js';
import { clearedPaths, maskedChanges, maskPaths, setAt } from '../update-mask.js';
import { clearConflicts, conflictRefusal } from '../conflicts.js';

type Json = Record<string, unknown>;

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

async function createEndpoint(
  ctx: EndpointWritesContext,
  req: Json,
  signal: AbortSignal,
  authorization: string | undefined,
) {
  const [, project = '', , location = ''] = nameParts('parent', text(req.parent), LOCATION_PATTERN);
  const given = text(req.endpointId);
  const idProblem = given === '' ? undefined : endpointIdProblem(given);
  if (idProblem !== undefined)
    throw GoogleApiError.badRequest([
      { field: 'endpoint_id', description: `${JSON.stringify(given.slice(0, 80))}: ${idProblem}` },
    ]);
  const id = given === '' ? generateEndpointId(ctx.random) : given;
  const target = endpointTarget('parent', `projects/${project}/locations/${location}/endpoints/${id}`);
  const caller = await authoriseWrite(ctx.gate, authorization, 'createPredictionEndpoint', {
    project,
    name: id,
    described: target.name,
  });
  const object = endpointObject(caller.namespace, id);
  const { spec, violations } = endpointSpecFromRequest(isRecord(req.endpoint) ? req.endpoint : {});
  const errors = validatePredictionEndpoint(
    { metadata: { name: id }, spec },
    undefined,
    defaultValidationOptions,
  ).errors;
  if (violations.length > 0) throw GoogleApiError.badRequest(violations);
  const invalid = badRequestOf(CREATE_ENDPOINT_FIELDS, errors);
  if (invalid !== undefined) throw invalid;
  await checkWritable(ctx.client, caller.namespace, []);
  // An apply creates or updates: CreateEndpoint must not change an endpoint that exists.
  if ((await ctx.client.get(object.resource, object.namespace, id, { signal })) !== undefined)
    throw new GoogleApiError(
      'ALREADY_EXISTS',
      `Endpoint ${JSON.stringify(target.name)} already exists (${object.described}).`,
    );
  const written = await applyAsCaller(ctx.client, {
    object,
    caller,
    intent: { spec },
    fields: CREATE_ENDPOINT_FIELDS,
    stamp: { verb: 'createEndpoint' },
  });
  return writeOperation(ctx, caller.namespace, target.name, 'createEndpoint', written, caller.manager);
}

async function updateEndpoint(
  ctx: EndpointWritesContext,
  req: Json,
  signal: AbortSignal,
  authorization: string | undefined,
) {
  const endpoint = isRecord(req.endpoint) ? req.endpoint : {};
  const target = endpointTarget('endpoint.name', text(endpoint.name));
  const caller = await authoriseWrite(ctx.gate, authorization, 'patchPredictionEndpoint', {
    project: target.project,
    name: target.endpoint,
    described: target.name,
  });
  const object = endpointObject(caller.namespace, target.endpoint);
  const current = await readEndpoint(ctx, caller.namespace, target, signal);
  const { changes, violations } = maskedChanges(endpoint, maskPaths(req.updateMask), UPDATE_ENDPOINT_MASK);
  if (violations.length > 0) throw GoogleApiError.badRequest(violations);
  const kept = clearConflicts(current, clearedPaths(changes));
  if (kept.length > 0) throw conflictRefusal(object.described, kept);
  const after: Json = structuredClone(isRecord(current.spec) ? current.spec : {});
  const intent: Json = { spec: {}, ...ownedFields(current, caller.manager) };
  const intentSpec = isRecord(intent.spec) ? intent.spec : {};
  intent.spec = intentSpec;
  for (const [path, value] of changes) {
    setAt(after, path, value);
    setAt(intentSpec, path, value);
  }
  // spec.etag is the existing read-modify-write rule (endpoint-validation.ts): given, it must equal status.etag.
  const etag = text(endpoint.etag);
  setAt(after, ['etag'], etag === '' ? undefined : etag);
  setAt(intentSpec, ['etag'], etag === '' ? undefined : etag);
  const errors = validatePredictionEndpoint({ ...current, spec: after }, current, defaultValidationOptions).errors;
  const stale = errors.find((e) => e.field === 'spec.etag');
  if (stale !== undefined)
    throw new GoogleApiError(
      'ABORTED',
      `endpoint.etag ${JSON.stringify(etag)} ${stale.detail.replace(/kubectl get/, 'GetEndpoint')}`,
    );
  const invalid = badRequestOf(UPDATE_ENDPOINT_FIELDS, errors);
  if (invalid !== undefined) throw invalid;
  const models = await deployedModelsOf(ctx, caller.namespace, target.endpoint, signal);
  if (changes.some(([path]) => path[0] === 'trafficSplit')) {
    const split = isRecord(after.trafficSplit) ? (after.trafficSplit as Record<string, number>) : undefined;
    const unknown = trafficSplitProblems(
      split,
      models.map(deployedIdOf).filter((id): id is string => id !== undefined),
    );
    if (unknown.length > 0)
      throw GoogleApiError.badRequest(
        unknown.map((id) => ({
          field: requestField(UPDATE_ENDPOINT_FIELDS, `spec.trafficSplit[${id}]`),
          description: `${id} is not a model deployed on this endpoint`,
        })),
      );
  }
  await checkWritable(ctx.client, caller.namespace, [{ obj: current, described: object.described }]);
  const written = await applyAsCaller(ctx.client, { object, caller, intent, fields: UPDATE_ENDPOINT_FIELDS });
  return endpointAnswer(written, models);
}

async function deleteEndpoint(
  ctx: EndpointWritesContext,
  req: Json,
  signal: AbortSignal,
  authorization: string | undefined,
) {
  const target = endpointTarget('name', text(req.name));
  const caller = await authoriseWrite(ctx.gate, authorization, 'deletePredictionEndpoint', {
    project: target.project,
    name: target.endpoint,
    described: target.name,
  });
  await readEndpoint(ctx, caller.namespace, target, signal);
  const models = await deployedModelsOf(ctx, caller.namespace, target.endpoint, signal);
  if (models.length > 0) {
    const listed = models.map((m) => `${deployedIdOf(m) ?? '(no id yet)'} (DeployedModel "${m.metadata.name ?? ''}")`);
    throw new GoogleApiError(
      'FAILED_PRECONDITION',
      `Endpoint ${JSON.stringify(target.name)} has deployed models: ${listed.join(', ')}; undeploy them (UndeployModel) before deleting the endpoint.`,
    );
  }
  const object = endpointObject(caller.namespace, target.endpoint);
  const deleted: KubeObject = await deleteAsCaller(ctx.client, { object, caller, fields: UPDATE_ENDPOINT_FIELDS });
  return writeOperation(ctx, caller.namespace, target.name, 'deleteEndpoint', deleted, caller.manager, {
    deleted: true,
  });
}

function method(
  ctx: EndpointWritesContext,
  name: string,
  http: ApiMethod['http'],
  fn: (
    ctx: EndpointWritesContext,
    req: Json,
    signal: AbortSignal,
    authorization: string | undefined,
  ) => Promise<unknown>,
): ApiMethod {
  return { service: EndpointService, name, http, call: (req, meta) => fn(ctx, req, meta.signal, meta.authorization) };
}

/** CreateEndpoint, UpdateEndpoint, DeleteEndpoint, with the http rules of endpoint_service.proto. */
export function endpointMethods(ctx: EndpointWritesContext): ApiMethod[] {
  return [
    method(
      ctx,
      'CreateEndpoint',
      [{ method: 'POST', path: '/v1/{parent=projects/*/locations/*}/endpoints', body: 'endpoint' }],
      createEndpoint,
    ),
    method(
      ctx,
      'UpdateEndpoint',
      [{ method: 'PATCH', path: '/v1/{endpoint.name=projects/*/locations/*/endpoints/*}', body: 'endpoint' }],
      updateEndpoint,
    ),
    method(
      ctx,
      'DeleteEndpoint',
      [{ method: 'DELETE', path: '/v1/{name=projects/*/locations/*/endpoints/*}' }],
      deleteEndpoint,
    ),
  ];
}
