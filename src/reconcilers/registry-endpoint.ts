/**
 * RegistryEndpoint reconciler: Ready once a RegistryService with the parent name exists in the
 * namespace (re-run through the service watch, not a poll); records spec.name in status so that
 * a change that got past the webhook and CEL is reported instead of silently re-parenting.
 */
import { registryEndpointKind } from '../api/registry/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { Index, type ReconcilerContext } from './context.js';
import { endpointParentKey } from '../api/registry/endpoint-verdict.js';
import { specValidator } from '../api/spec-validator.js';
import { computeRegistryEndpointStatus } from './registry-status.js';
import { statusTime } from './status-common.js';
import { objectToReconcile, reportStatus } from './prologue.js';

export function registryEndpointReconciler(
  ctx: ReconcilerContext,
): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateEndpoint = specValidator(registryEndpointKind, ctx.settings);

  const parentExists = (endpoint: KubeObject): boolean => {
    const key = endpointParentKey(endpoint);
    return (
      key !== undefined &&
      ctx.informers.registryServices
        .byIndex(Index.servicesByName, key)
        .some((s) => s.metadata.deletionTimestamp === undefined)
    );
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
    const endpoint = objectToReconcile(ctx, 'registryEndpoints', req, { skipDeleting: true });
    if (endpoint === undefined) return Action.done();
    return reportStatus(ctx, 'registryEndpoints', req, endpoint, compute(endpoint), compute);
  };
}
