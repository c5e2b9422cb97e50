/**
 * Cluster DNS projection of RegistryServices with `spec.dns.enabled` (the plan is in
 * registry-dns-plan.ts). Level-triggered per RegistryService: the live Service and slices are compared
 * with the plan and only what differs is written (one slice per endpoint change; a hand edit of a managed
 * object is reverted by the same comparison). What the operator created is removed when the opt-in goes,
 * the name is lost to an older claimant, or the RegistryService is deleted. A Service of the name that
 * the RegistryService does not control is never written or deleted: the conflict is reported through
 * `outcomes`, which the RegistryService status reconciler folds into its Ready condition.
 */
import { registryEndpointKind, registryServiceKind } from '../api/registry/kinds.js';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-error.js';
import { Action, isTerminal, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { endpointSlicesResource, servicesResource } from '../runtime/endpoint-slices.js';
import type { Informer } from '../kube/informer.js';
import { objectKey, type KubeObject, type ResourceRef } from '../api/common/kube-object.js';
import { Index, type ReconcilerContext } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import {
  dnsServiceName,
  isControlledBy,
  lastSegment,
  overlay,
  planSlices,
  serviceDiffers,
  serviceManifest,
  sliceDiffers,
  sliceManifest,
  type DnsEndpoint,
  type RegistryServiceRef,
} from './registry-dns-plan.js';
import type { RegistryNameClaims } from './registry-name-claims.js';
import { readyEndpoints } from './registry-status.js';
import { Reasons, type ReadyVerdict, type RegistryServiceReason } from '../api/common/conditions.js';
import { specOf } from '../api/typed-spec.js';

/** What the projection reports into the RegistryService's Ready condition. */
export type DnsOutcome = ReadyVerdict<RegistryServiceReason>;

/** The projection's last outcome per RegistryService key; read by the status reconciler. */
export class DnsOutcomes {
  private readonly byKey = new Map<string, DnsOutcome>();

  get(key: string): DnsOutcome | undefined {
    return this.byKey.get(key);
  }

  /** Records an outcome; returns whether it differs from the previous one. */
  set(key: string, outcome: DnsOutcome | undefined): boolean {
    const before = this.byKey.get(key);
    if (outcome === undefined) this.byKey.delete(key);
    else this.byKey.set(key, outcome);
    return JSON.stringify(before) !== JSON.stringify(outcome);
  }
}

export interface DnsProjection {
  /** Every Service of the scope. */
  readonly services: Informer;
  /** The Services, or the managed slices, that a RegistryService (`namespace/name`, any incarnation) controls. */
  readonly controlled: (what: 'services' | 'slices', key: string) => KubeObject[];
  readonly claims: RegistryNameClaims;
  readonly outcomes: DnsOutcomes;
  /** Re-runs the RegistryService status reconcile of a key (its Ready condition reports the outcome). */
  readonly reportOutcome: (key: string) => void;
}

export function dnsEnabled(service: KubeObject): boolean {
  return specOf.registryService(service).dns?.enabled === true;
}

export function registryDnsReconciler(
  ctx: ReconcilerContext,
  dns: DnsProjection,
): (req: ReconcileRequest) => Promise<ReconcileResult> {
  const validService = specValidator(registryServiceKind, ctx.settings);
  const validEndpoint = specValidator(registryEndpointKind, ctx.settings);
  const sliceRef: ResourceRef = endpointSlicesResource;

  const remove = async (ref: ResourceRef, objs: readonly KubeObject[], signal: AbortSignal): Promise<void> => {
    for (const o of objs)
      await ctx.client
        .delete(ref, o.metadata.namespace, o.metadata.name ?? '', {
          preconditions: { uid: o.metadata.uid ?? '' },
          signal,
        })
        .catch(ignoreGone);
  };

  const report = (key: string, outcome: DnsOutcome | undefined): void => {
    if (dns.outcomes.set(key, outcome)) dns.reportOutcome(key);
  };

  const reconcile = async (req: ReconcileRequest): Promise<ReconcileResult> => {
    const { signal } = req;
    const namespace = req.namespace ?? '';
    const rs = ctx.informers.registryServices.get(req.namespace, req.name);
    // Controlled by a RegistryService of this name, any incarnation: the uid is checked below.
    const ownedSlices = dns.controlled('slices', req.key);
    const ownedServices = dns.controlled('services', req.key);
    const specName = rs === undefined ? undefined : specOf.registryService(rs).name;
    const uid = rs?.metadata.uid ?? '';
    const wanted =
      rs !== undefined &&
      specName !== undefined &&
      rs.metadata.deletionTimestamp === undefined &&
      dnsEnabled(rs) &&
      validService(rs).length === 0 &&
      dns.claims.claims(specName).owner?.metadata.uid === uid;
    // Slices and Services of an earlier incarnation (same name, other uid) are not ours to keep.
    const stale = (o: KubeObject): boolean => !wanted || !isControlledBy(o, uid);
    await remove(sliceRef, ownedSlices.filter(stale), signal);
    await remove(
      servicesResource,
      ownedServices.filter((s) => stale(s) || s.metadata.name !== dnsServiceName(specName ?? '')),
      signal,
    );
    if (!wanted || rs === undefined || specName === undefined) {
      report(req.key, undefined);
      return Action.done();
    }

    const ref: RegistryServiceRef = { name: req.name, namespace, uid, serviceName: specName };
    const svcName = dnsServiceName(specName);
    const live = dns.services.get(namespace, svcName);
    if (live !== undefined && !isControlledBy(live, uid)) {
      await remove(sliceRef, ownedSlices, signal);
      report(req.key, {
        status: 'False',
        reason: Reasons.DnsServiceConflict,
        message: `spec.dns: Service "${svcName}" in namespace "${namespace}" exists and is not managed by this RegistryService; it is left alone and the endpoints are not in cluster DNS; delete or rename that Service, or set spec.dns.enabled to false`,
      });
      return Action.done();
    }

    const endpoints: DnsEndpoint[] = readyEndpoints({
      endpoints: ctx.informers.registryEndpoints.byIndex(Index.endpointsByParent, objectKey(namespace, specName)),
      endpointErrors: validEndpoint,
      reservedPrefixes: ctx.settings.reservedPrefixes,
      now: '',
    }).map((e) => ({ id: lastSegment(e.name), address: e.address ?? '', port: e.port ?? 0 }));

    const wantService = serviceManifest(ref, endpoints);
    if (live === undefined) await ctx.client.create(servicesResource, namespace, wantService, { signal });
    else if (serviceDiffers(live, wantService))
      await ctx.client.replace(servicesResource, namespace, svcName, overlay(live, wantService), { signal });

    const current = ownedSlices.filter((s) => isControlledBy(s, uid));
    const plans = planSlices(svcName, endpoints, current);
    const planned = new Set(plans.map((p) => p.name));
    for (const plan of plans) {
      const want = sliceManifest(ref, plan);
      const liveSlice = current.find((s) => s.metadata.name === plan.name);
      if (liveSlice === undefined) await createOrReplace(ctx, sliceRef, namespace, want, signal);
      else if (liveSlice.addressType !== want.addressType) {
        // addressType is immutable: replace the slice.
        await remove(sliceRef, [liveSlice], signal);
        await ctx.client.create(sliceRef, namespace, want, { signal });
      } else if (sliceDiffers(liveSlice, want))
        await ctx.client.replace(sliceRef, namespace, plan.name, overlay(liveSlice, want), { signal });
    }
    await remove(
      sliceRef,
      current.filter((s) => !planned.has(s.metadata.name ?? '')),
      signal,
    );
    report(req.key, {
      status: 'True',
      reason: Reasons.Reconciled,
      message: `in cluster DNS as ${svcName}.${namespace}.svc`,
    });
    return Action.done();
  };

  // A failed write is reported where users look (the RegistryService's Ready condition) before the
  // controller retries it, or, for a refusal (403/422), until the object changes.
  return async (req) => {
    try {
      return await reconcile(req);
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err) && !req.signal.aborted) {
        const why = err instanceof Error ? err.message : String(err);
        report(
          req.key,
          isTerminal(err)
            ? {
                status: 'False',
                reason: Reasons.RequestRejected,
                message: `spec.dns: the API server refused a write of the DNS projection: ${why}`.slice(0, 1024),
              }
            : {
                status: 'Unknown',
                reason: Reasons.ReconcileError,
                message: `spec.dns: writing the DNS projection failed, retrying with backoff: ${why}`.slice(0, 1024),
              },
        );
      }
      throw err;
    }
  };
}

/**
 * Creates a slice; if one of that name exists that the informer does not hold (a hand edit removed the
 * managed-by label, so the label-selected watch dropped it), it is read and overwritten when this
 * RegistryService controls it, and reported otherwise.
 */
async function createOrReplace(
  ctx: ReconcilerContext,
  ref: ResourceRef,
  namespace: string,
  want: KubeObject,
  signal: AbortSignal,
): Promise<void> {
  try {
    await ctx.client.create(ref, namespace, want, { signal });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const live = await ctx.client.get(ref, namespace, want.metadata.name ?? '', { signal });
    const owner = want.metadata.ownerReferences?.[0]?.uid ?? '';
    if (live === undefined || !isControlledBy(live, owner)) throw err;
    await ctx.client.replace(ref, namespace, want.metadata.name ?? '', overlay(live, want), { signal });
  }
}

function ignoreGone(err: unknown): boolean {
  // A 409 on a uid precondition means someone re-created the object: it is not the one we meant to delete.
  if (
    err instanceof Error &&
    'status' in err &&
    ((err as { status: number }).status === 409 || (err as { status: number }).status === 404)
  )
    return false;
  throw err;
}

/** Maps a Service or slice to the RegistryService that controls it. */
export function controllerKey(obj: KubeObject): string[] {
  return (obj.metadata.ownerReferences ?? [])
    .filter((r) => r.kind === 'RegistryService' && r.controller === true)
    .map((r) => objectKey(obj.metadata.namespace, r.name));
}
