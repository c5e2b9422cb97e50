/**
 * RegistryEndpoint reconciler: Ready once a RegistryService with the parent name exists in the
 * namespace (re-run through the service watch, not a poll); records spec.name in status so that
 * a change that got past the webhook and CEL is reported instead of silently re-parenting.
 */
import { registryEndpointKind } from '../api/registry/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import type { KubeObject } from '../runtime/kube-object.js';
import { endpointParentKey, Index, specValidator, type ReconcilerContext } from './context.js';
import { computeRegistryEndpointStatus } from './registry-status.js';
import { statusTime } from './status-common.js';
import { writeStatus } from './status-write.js';

export function registryEndpointReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateEndpoint = specValidator(registryEndpointKind, ctx.settings);

  const parentExists = (endpoint: KubeObject): boolean => {
    const key = endpointParentKey(endpoint);
    return key !== undefined && ctx.informers.registryServices.byIndex(Index.servicesByName, key).some((s) => s.metadata.deletionTimestamp === undefined);
  };

  const compute = (endpoint: KubeObject): ReturnType<typeof computeRegistryEndpointStatus> =>
    computeRegistryEndpointStatus({
      endpoint,
      parentExists: parentExists(endpoint),
      specErrors: validateEndpoint(endpoint),
      reservedPrefixes: ctx.settings.reservedPrefixes,
      now: statusTime(ctx.clock),
    });

  return async (req) => {
    const endpoint = ctx.informers.registryEndpoints.get(req.namespace, req.name);
    if (endpoint === undefined || endpoint.metadata.deletionTimestamp !== undefined) return Action.done();
    if (ctx.ownWrites.isStale(endpoint)) return Action.done();
    const status = compute(endpoint);
    const hold = ctx.grace.holdMs(endpoint, status.verdict.reason);
    if (hold > 0) return Action.requeueAfter(hold);
    await writeStatus(ctx, 'registryEndpoints', registryEndpointKind, endpoint, status, compute, req.signal);
    return Action.done();
  };
}
