/** RegistryService reconciler: lists the service's ready endpoints (sorted) in its status. */
import { registryEndpointKind, registryServiceKind } from '../api/registry/kinds.js';
import { Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { keyOf, objectKey, type KubeObject } from '../api/common/kube-object.js';
import { dnsEnabled, type DnsOutcome, type DnsOutcomes } from './registry-dns.js';
import type { RegistryNameClaims } from './registry-name-claims.js';
import { Index, type ReconcilerContext } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import { computeRegistryServiceStatus } from './registry-status.js';
import { statusTime } from './status-common.js';
import { specOf } from '../api/typed-spec.js';
import { objectToReconcile, reportStatus } from './prologue.js';

/** What the status reads beyond the shard's own caches: name claims over every namespace, and the DNS projection's outcome. */
export interface RegistryServiceExtras {
  readonly claims: RegistryNameClaims;
  readonly dnsOutcomes: DnsOutcomes;
}

export function registryServiceReconciler(
  ctx: ReconcilerContext,
  extras?: RegistryServiceExtras,
): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validateService = specValidator(registryServiceKind, ctx.settings);
  const validateEndpoint = specValidator(registryEndpointKind, ctx.settings);

  const compute = (service: KubeObject): ReturnType<typeof computeRegistryServiceStatus> => {
    const name = specOf.registryService(service).name;
    const endpoints =
      name === undefined
        ? []
        : ctx.informers.registryEndpoints.byIndex(Index.endpointsByParent, objectKey(service.metadata.namespace, name));
    return computeRegistryServiceStatus({
      service,
      endpoints,
      specErrors: validateService(service),
      endpointErrors: validateEndpoint,
      reservedPrefixes: ctx.settings.reservedPrefixes,
      now: statusTime(ctx.clock),
      ...(extras !== undefined && name !== undefined ? { claims: extras.claims.claims(name) } : {}),
      ...(extras !== undefined && dnsEnabled(service) ? optionalDns(extras.dnsOutcomes.get(keyOf(service))) : {}),
    });
  };

  return async (req) => {
    const service = objectToReconcile(ctx, 'registryServices', req, { skipDeleting: true });
    if (service === undefined) return Action.done();
    return reportStatus(ctx, 'registryServices', req, service, compute(service), compute, {
      holdOrderingStates: false,
    });
  };
}

function optionalDns(outcome: DnsOutcome | undefined): { dns?: DnsOutcome } {
  return outcome === undefined ? {} : { dns: outcome };
}
