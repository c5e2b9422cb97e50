/**
 * The registry as lookups see it: RegistryServices and RegistryEndpoints from two informers, turned
 * into LookupServices on first use after a change and kept until the next change of that name, so a
 * resolve costs a map lookup and a filter pass, not a re-validation of a hundred endpoints.
 *
 * Readiness is the operator's own rule run over the cache (registryEndpointVerdict, the validators
 * the reconcilers use), not a read of the objects' status, so resolution follows an endpoint change
 * as soon as the watch delivers it instead of after the operator's (coalesced) status write.
 */
import { z } from 'zod';
import { registryEndpointKind, registryServiceKind } from '../../api/registry/kinds.js';
import { effectiveAnnotations } from '../../api/registry/annotations.js';
import { CONVERSION_DATA_ANNOTATION } from '../../api/registry/conversion.js';
import { nameClaims } from '../../api/registry/name-owner.js';
import { resources } from '../../api/kind-bindings.js';
import { specValidator } from '../../api/spec-validator.js';
import { endpointParentKey, registryEndpointVerdict } from '../../api/registry/endpoint-verdict.js';
import { compareStrings } from '../../api/common/order.js';
import { specOf } from '../../api/typed-spec.js';
import { Informer, kubeListerWatcher } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { objectKey, type KubeObject } from '../../api/common/kube-object.js';
import { silentLogger, type Logger } from '../../base/logger.js';
import type { LookupEndpoint, LookupService, RegistryLookupSource } from './lookup.js';

const BY_NAME = 'lookupByServiceName';
const BY_PARENT = 'lookupByParent';

export interface RegistryLookupCacheOptions {
  readonly reservedPrefixes: readonly string[];
}

export class RegistryLookupCache implements RegistryLookupSource {
  /** Materialised services by spec.name; `null` = computed, nothing resolvable. Dropped on any change of the name. */
  private readonly views = new Map<string, LookupService | null>();
  private readonly endpointViews = new WeakMap<KubeObject, LookupEndpoint | null>();
  private readonly validService: (o: KubeObject) => boolean;
  private readonly validEndpoint: (o: KubeObject) => boolean;

  /** One informer per kind and watched namespace (or one each over all namespaces). */
  constructor(
    private readonly services: readonly Informer[],
    private readonly endpoints: readonly Informer[],
    private readonly options: RegistryLookupCacheOptions,
  ) {
    const serviceErrors = specValidator(registryServiceKind, options);
    const endpointErrors = specValidator(registryEndpointKind, options);
    this.validService = (o) => serviceErrors(o).length === 0;
    this.validEndpoint = (o) =>
      registryEndpointVerdict({
        endpoint: o,
        parentExists: true,
        specErrors: endpointErrors(o),
        reservedPrefixes: options.reservedPrefixes,
        now: '',
      }).status === 'True';
    const forgetService = (s: KubeObject): void => this.forget(specOf.registryService(s).name);
    const forgetEndpoint = (e: KubeObject): void => this.forget(parentNameOf(e));
    for (const informer of services) {
      informer.addIndex(BY_NAME, (s) => optional(specOf.registryService(s).name));
      informer.addEventHandler({
        onAdd: forgetService,
        onUpdate: (a, b) => (forgetService(a), forgetService(b)),
        onDelete: forgetService,
      });
    }
    for (const informer of endpoints) {
      informer.addIndex(BY_PARENT, (e) => optional(endpointParentKey(e)));
      informer.addEventHandler({
        onAdd: forgetEndpoint,
        onUpdate: (a, b) => (forgetEndpoint(a), forgetEndpoint(b)),
        onDelete: forgetEndpoint,
      });
    }
  }

  service(name: string): LookupService | undefined {
    let view = this.views.get(name);
    if (view === undefined) {
      view = this.compute(name);
      this.views.set(name, view);
    }
    return view ?? undefined;
  }

  /** The RegistryService (namespace and metadata.name) that owns `name`: what a call on `name` is authorised against. */
  ownerOf(name: string): { namespace: string; name: string } | undefined {
    const owner = nameClaims(this.claimants(name)).owner;
    return owner === undefined
      ? undefined
      : { namespace: owner.metadata.namespace ?? '', name: owner.metadata.name ?? '' };
  }

  /** The RegistryServices claiming `name` that could resolve (valid, not being deleted); the owner is the oldest. */
  claimants(name: string): KubeObject[] {
    return this.services
      .flatMap((i) => i.byIndex(BY_NAME, name))
      .filter((s) => s.metadata.deletionTimestamp === undefined && this.validService(s));
  }

  private forget(name: string | undefined): void {
    if (name !== undefined) this.views.delete(name);
  }

  private compute(name: string): LookupService | null {
    const owner = nameClaims(this.claimants(name)).owner;
    if (owner === undefined) return null;
    const endpoints: LookupEndpoint[] = [];
    const key = objectKey(owner.metadata.namespace, name);
    for (const e of this.endpoints.flatMap((i) => i.byIndex(BY_PARENT, key))) {
      const view = this.endpointView(e);
      if (view !== null) endpoints.push(view);
    }
    endpoints.sort((a, b) => compareStrings(a.name, b.name));
    return {
      name,
      annotations: effectiveAnnotations(specOf.registryService(owner).annotations, this.options.reservedPrefixes),
      uid: owner.metadata.uid ?? '',
      endpoints,
    };
  }

  private endpointView(e: KubeObject): LookupEndpoint | null {
    let view = this.endpointViews.get(e);
    if (view === undefined) {
      view =
        e.metadata.deletionTimestamp === undefined && this.validEndpoint(e)
          ? toLookupEndpoint(e, this.options.reservedPrefixes)
          : null;
      this.endpointViews.set(e, view);
    }
    return view;
  }
}

function toLookupEndpoint(e: KubeObject, reservedPrefixes: readonly string[]): LookupEndpoint {
  const spec = specOf.registryEndpoint(e);
  return {
    name: spec.name ?? '',
    address: spec.address ?? '',
    port: spec.port ?? 0,
    annotations: effectiveAnnotations(spec.annotations, reservedPrefixes),
    network: networkOf(e),
    uid: e.metadata.uid ?? '',
  };
}

/** The part of the conversion annotation the lookup reads. */
const conversionNetworkSchema = z.object({ spec: z.object({ network: z.string() }) });

/** v1beta1's `spec.network` travels in the conversion annotation while the object is stored as v1 (see conversion.ts). */
function networkOf(e: KubeObject): string {
  const text = e.metadata.annotations?.[CONVERSION_DATA_ANNOTATION];
  if (text === undefined) return '';
  try {
    const parsed = conversionNetworkSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.spec.network : '';
  } catch {
    return '';
  }
}

function parentNameOf(e: KubeObject): string | undefined {
  const key = endpointParentKey(e);
  return key === undefined ? undefined : key.slice(key.indexOf('/') + 1);
}

function optional(v: string | undefined): string[] {
  return v === undefined ? [] : [v];
}

export interface RunningRegistryLookup {
  readonly source: RegistryLookupCache;
  /** Resolves once both informers listed (lookups before that answer NOT_FOUND). */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export interface StartRegistryLookupOptions {
  readonly client: KubeClient;
  /** Namespaces to watch; empty or absent = all namespaces (one name owner is decided over all of them). */
  readonly namespaces?: readonly string[];
  readonly reservedPrefixes: readonly string[];
  readonly log?: Logger;
}

/** Runs the informers the lookup needs (without a gateway, e.g. for the CLI) and returns the cache over them. */
export function startRegistryLookup(options: StartRegistryLookupOptions): RunningRegistryLookup {
  const log = options.log ?? silentLogger;
  const scope: (string | undefined)[] =
    options.namespaces !== undefined && options.namespaces.length > 0 ? [...options.namespaces] : [undefined];
  const informers = (ref: typeof resources.registryServices): Informer[] =>
    scope.map(
      (ns) =>
        new Informer(kubeListerWatcher(options.client, ref, ns), {
          name: `lookup/${ref.plural}${ns ? `@${ns}` : ''}`,
          logger: log,
        }),
    );
  const services = informers(resources.registryServices);
  const endpoints = informers(resources.registryEndpoints);
  const source = new RegistryLookupCache(services, endpoints, { reservedPrefixes: options.reservedPrefixes });
  const stopping = new AbortController();
  const all = [...services, ...endpoints];
  const runs = all.map((i) => i.run(stopping.signal));
  const ready = Promise.all(all.map((i) => i.waitForSync(stopping.signal))).then(() => undefined);
  return {
    source,
    ready,
    stop: async () => {
      stopping.abort();
      await Promise.allSettled(runs);
    },
  };
}
