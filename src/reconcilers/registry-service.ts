/** RegistryService reconciler: lists the service's ready endpoints (sorted) in its status. */
import { registryEndpointKind, registryServiceKind } from '../api/registry/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { objectKey, type KubeObject } from '../runtime/kube-object.js';
import { Index, specValidator, type ReconcilerContext } from './context.js';
import { computeRegistryServiceStatus } from './registry-status.js';
import { rfc3339 } from './status-common.js';
import { specOf } from './typed-spec.js';
import { writeStatus } from './status-write.js';

export function registryServiceReconciler(ctx: ReconcilerContext): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateService = specValidator(registryServiceKind, ctx.settings);
  const validateEndpoint = specValidator(registryEndpointKind, ctx.settings);

  const compute = (service: KubeObject): ReturnType<typeof computeRegistryServiceStatus> => {
    const name = specOf.registryService(service).name;
    const endpoints = name === undefined ? [] : ctx.informers.registryEndpoints.byIndex(Index.endpointsByParent, objectKey(service.metadata.namespace, name));
    return computeRegistryServiceStatus({
      service,
      endpoints,
      specErrors: validateService(service),
      endpointErrors: validateEndpoint,
      reservedPrefixes: ctx.settings.reservedPrefixes,
      now: rfc3339(ctx.now()),
    });
  };

  return async (req) => {
    const service = ctx.informers.registryServices.get(req.namespace, req.name);
    if (service === undefined || service.metadata.deletionTimestamp !== undefined) return Action.done();
    if (ctx.ownWrites.isStale(service)) return Action.done();
    await writeStatus(ctx, 'registryServices', registryServiceKind, service, compute(service), compute, req.signal);
    return Action.done();
  };
}
