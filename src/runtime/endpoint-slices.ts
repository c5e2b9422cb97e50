/**
 * Services and EndpointSlices, typed for what the operator and the gateway read from them: which
 * addresses of a Service are ready on which port (`discovery.k8s.io/v1`, served since Kubernetes 1.21).
 * Decoding is total: an object of the wrong shape decodes to `undefined`, never throws.
 */
import { isRecord, type KubeObject, type ObjectMeta, type ResourceRef } from '../api/common/kube-object.js';

/** The label that ties a slice to its Service (KEP-752); kube-proxy and CoreDNS select slices by it. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** Which controller owns a slice; the EndpointSlice controller leaves slices with another value alone. */
export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';

export const servicesResource: ResourceRef = { group: '', version: 'v1', plural: 'services', namespaced: true };

export const endpointSlicesResource: ResourceRef = {
  group: 'discovery.k8s.io',
  version: 'v1',
  plural: 'endpointslices',
  namespaced: true,
};

export type AddressFamily = 'IPv4' | 'IPv6';

export interface SlicePort {
  readonly name: string; // '' when the Service has one unnamed port
  readonly port: number;
  readonly protocol: string;
}

export interface SliceEndpoint {
  readonly addresses: readonly string[];
  /** `conditions.ready`; the API says an unset value means ready. */
  readonly ready: boolean;
}

export interface EndpointSlice {
  readonly metadata: ObjectMeta;
  readonly serviceName: string | undefined;
  readonly addressType: AddressFamily | 'FQDN';
  readonly ports: readonly SlicePort[];
  readonly endpoints: readonly SliceEndpoint[];
}

export function decodeEndpointSlice(obj: KubeObject): EndpointSlice | undefined {
  const addressType = obj.addressType;
  if (addressType !== 'IPv4' && addressType !== 'IPv6' && addressType !== 'FQDN') return undefined;
  const ports = Array.isArray(obj.ports) ? obj.ports.filter(isRecord) : [];
  const endpoints = Array.isArray(obj.endpoints) ? obj.endpoints.filter(isRecord) : [];
  return {
    metadata: obj.metadata,
    serviceName: obj.metadata.labels?.[SERVICE_NAME_LABEL],
    addressType,
    ports: ports.flatMap((p) =>
      typeof p.port === 'number'
        ? [
            {
              name: typeof p.name === 'string' ? p.name : '',
              port: p.port,
              protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
            },
          ]
        : [],
    ),
    endpoints: endpoints.map((e) => {
      const conditions = isRecord(e.conditions) ? e.conditions : {};
      return {
        addresses: Array.isArray(e.addresses) ? e.addresses.filter((a): a is string => typeof a === 'string') : [],
        ready: conditions.ready !== false,
      };
    }),
  };
}

export interface ServicePort {
  readonly name: string;
  readonly port: number;
  readonly protocol: string;
}

export interface Service {
  readonly metadata: ObjectMeta;
  /** Selector-less Services get their endpoints from slices someone else writes. */
  readonly selector: Readonly<Record<string, string>> | undefined;
  readonly ports: readonly ServicePort[];
}

export function decodeService(obj: KubeObject): Service | undefined {
  const spec = isRecord(obj.spec) ? obj.spec : undefined;
  if (spec === undefined) return undefined;
  const ports = Array.isArray(spec.ports) ? spec.ports.filter(isRecord) : [];
  const selector = isRecord(spec.selector)
    ? (Object.fromEntries(Object.entries(spec.selector).filter(([, v]) => typeof v === 'string')) as Record<
        string,
        string
      >)
    : undefined;
  return {
    metadata: obj.metadata,
    selector,
    ports: ports.flatMap((p) =>
      typeof p.port === 'number'
        ? [
            {
              name: typeof p.name === 'string' ? p.name : '',
              port: p.port,
              protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
            },
          ]
        : [],
    ),
  };
}

/** The Service port a reference names: by number, or by name. */
export function findServicePort(service: Service, port: number | string): ServicePort | undefined {
  return service.ports.find((p) => (typeof port === 'number' ? p.port === port : p.name === port));
}

export interface ReadyAddress {
  readonly address: string;
  readonly port: number;
  readonly family: AddressFamily;
}

/**
 * The ready addresses behind one Service port, as kube-proxy finds them: in every slice of the Service,
 * the slice port whose name equals the Service port's name (the target port may differ per slice).
 * FQDN slices are skipped (kube-proxy ignores them too). Duplicates across slices are returned once.
 */
export function readyAddresses(slices: Iterable<EndpointSlice>, servicePort: ServicePort): ReadyAddress[] {
  const seen = new Set<string>();
  const out: ReadyAddress[] = [];
  for (const slice of slices) {
    if (slice.addressType === 'FQDN') continue;
    const port = slice.ports.find((p) => p.name === servicePort.name && p.protocol === servicePort.protocol);
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints) {
      if (!endpoint.ready) continue;
      for (const address of endpoint.addresses) {
        const key = `${address}|${port.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push({ address, port: port.port, family: slice.addressType });
      }
    }
  }
  return out;
}
