/**
 * Cluster DNS for a RegistryService, as pure functions: the headless selector-less Service and the
 * EndpointSlices that hold its Ready endpoints, and whether a live object differs from them.
 *
 * - The Service is named after the service id (the last segment of spec.name, an RFC 1035 label, so a
 *   valid Service name) in the RegistryService's namespace: clients resolve `{service}.{namespace}.svc`.
 *   It is headless (`clusterIP: None`), so A/AAAA answers are the endpoints' own addresses, and it has
 *   one port per distinct endpoint port, named `port-{number}` (SRV `_port-8080._tcp.{service}...`).
 * - Slices hold one address family and one port each (a slice's endpoints all share its ports), at most
 *   MAX_ENDPOINTS_PER_SLICE endpoints, each with `hostname` = the endpoint id (`{id}.{service}.{ns}.svc`).
 * - Placement is stable: an endpoint stays in the slice that holds it, a new one goes to the first slice
 *   of its group with room, so one endpoint change rewrites one slice (the EndpointSlice controller's
 *   rule), not every slice after it in name order.
 * - Everything carries an owner reference to the RegistryService (controller), so garbage collection
 *   removes it with the RegistryService; slices carry `kubernetes.io/service-name` and
 *   `endpointslice.kubernetes.io/managed-by` so kube-proxy and CoreDNS read them and the EndpointSlice
 *   controller leaves them alone.
 */
import { isIP } from 'node:net';
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../runtime/endpoint-slices.js';
import { isRecord, type KubeObject, type OwnerReference } from '../api/common/kube-object.js';
import { compareStrings } from '../api/common/order.js';

/** `endpointslice.kubernetes.io/managed-by` of the slices the operator writes. */
export const DNS_MANAGED_BY = 'registry-dns.endpoint-operator.dev';
/** On the Service: which RegistryService it projects (spec.name is too long for a label value). */
export const DNS_SOURCE_ANNOTATION = 'registry.endpoint-operator.dev/service-name';
export const MAX_ENDPOINTS_PER_SLICE = 100;

export interface DnsEndpoint {
  /** The endpoint id (last segment of its spec.name): the slice endpoint's hostname. */
  readonly id: string;
  readonly address: string;
  readonly port: number;
}

type Family = 'IPv4' | 'IPv6';

interface Group {
  readonly family: Family;
  readonly port: number;
}

export interface RegistryServiceRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  /** spec.name. */
  readonly serviceName: string;
}

export function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** The Kubernetes Service name of a RegistryService: its service id. */
export function dnsServiceName(specName: string): string {
  return lastSegment(specName);
}

export function portName(port: number): string {
  return `port-${port}`;
}

function ownerOf(rs: RegistryServiceRef): OwnerReference {
  return {
    apiVersion: 'registry.endpoint-operator.dev/v1',
    kind: 'RegistryService',
    name: rs.name,
    uid: rs.uid,
    controller: true,
  };
}

/** Whether `obj` is controlled by the RegistryService with `uid`. */
export function isControlledBy(obj: KubeObject, uid: string): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.controller === true);
}

function familyOf(address: string): Family | undefined {
  const v = isIP(address);
  return v === 4 ? 'IPv4' : v === 6 ? 'IPv6' : undefined;
}

function slicePrefix(service: string, g: Group): string {
  return `${service}-${g.family === 'IPv4' ? 'ipv4' : 'ipv6'}-${g.port}-`;
}

const groupKey = (g: Group): string => `${g.family}/${g.port}`;
const memberKey = (e: { hostname: string; address: string }): string => `${e.hostname}|${e.address}`;

export interface SlicePlan {
  readonly name: string;
  readonly family: Family;
  readonly port: number;
  readonly endpoints: readonly { hostname: string; address: string }[];
}

/** The members (hostname, address) of a live slice, read leniently (a hand edit may have broken it). */
function liveMembers(slice: KubeObject): { hostname: string; address: string }[] {
  const endpoints = Array.isArray(slice.endpoints) ? slice.endpoints.filter(isRecord) : [];
  return endpoints.flatMap((e) => {
    const address = Array.isArray(e.addresses) && typeof e.addresses[0] === 'string' ? e.addresses[0] : undefined;
    return address === undefined ? [] : [{ hostname: typeof e.hostname === 'string' ? e.hostname : '', address }];
  });
}

/**
 * The slices to hold `endpoints`, given the operator's live slices of this Service (by name). Endpoints
 * without an address are left out (nothing to resolve); port 0 groups slices with no port (A records only).
 */
export function planSlices(
  service: string,
  endpoints: readonly DnsEndpoint[],
  live: readonly KubeObject[],
  maxPerSlice = MAX_ENDPOINTS_PER_SLICE,
): SlicePlan[] {
  const wanted = new Map<string, { group: Group; members: Map<string, { hostname: string; address: string }> }>();
  for (const e of endpoints) {
    const family = familyOf(e.address);
    if (family === undefined) continue;
    const group = { family, port: e.port };
    let g = wanted.get(groupKey(group));
    if (g === undefined) wanted.set(groupKey(group), (g = { group, members: new Map() }));
    const member = { hostname: e.id, address: e.address };
    g.members.set(memberKey(member), member);
  }
  const liveByName = new Map(live.map((s) => [s.metadata.name ?? '', s]));
  const plans: SlicePlan[] = [];
  for (const { group, members } of [...wanted.values()].sort((a, b) =>
    compareStrings(groupKey(a.group), groupKey(b.group)),
  )) {
    const prefix = slicePrefix(service, group);
    // The group's live slices, in index order, keep the members still wanted.
    const slots = [...liveByName.keys()]
      .filter((n) => n.startsWith(prefix) && /^[0-9]+$/.test(n.slice(prefix.length)))
      .sort((a, b) => Number(a.slice(prefix.length)) - Number(b.slice(prefix.length)))
      .map((name) => ({ name, members: [] as { hostname: string; address: string }[] }));
    const placed = new Set<string>();
    for (const slot of slots) {
      for (const m of liveMembers(liveByName.get(slot.name) as KubeObject)) {
        const key = memberKey(m);
        if (members.has(key) && !placed.has(key) && slot.members.length < maxPerSlice) {
          slot.members.push(members.get(key) as { hostname: string; address: string });
          placed.add(key);
        }
      }
    }
    let next = 0;
    const used = new Set(slots.map((s) => s.name));
    for (const m of [...members.values()].sort((a, b) => compareStrings(memberKey(a), memberKey(b)))) {
      if (placed.has(memberKey(m))) continue;
      let slot = slots.find((s) => s.members.length < maxPerSlice);
      if (slot === undefined) {
        while (used.has(`${prefix}${next}`)) next++;
        slot = { name: `${prefix}${next}`, members: [] };
        used.add(slot.name);
        slots.push(slot);
      }
      slot.members.push(m);
    }
    for (const slot of slots) {
      if (slot.members.length === 0) continue;
      plans.push({
        name: slot.name,
        family: group.family,
        port: group.port,
        endpoints: [...slot.members].sort((a, b) => compareStrings(memberKey(a), memberKey(b))),
      });
    }
  }
  return plans;
}

export function serviceManifest(rs: RegistryServiceRef, endpoints: readonly DnsEndpoint[]): KubeObject {
  const ports = [
    ...new Set(endpoints.filter((e) => e.port > 0 && familyOf(e.address) !== undefined).map((e) => e.port)),
  ].sort((a, b) => a - b);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: dnsServiceName(rs.serviceName),
      namespace: rs.namespace,
      labels: { 'app.kubernetes.io/managed-by': 'endpoint-operator' },
      annotations: { [DNS_SOURCE_ANNOTATION]: rs.serviceName },
      ownerReferences: [ownerOf(rs)],
    },
    spec: {
      clusterIP: 'None',
      ports: ports.map((port) => ({ name: portName(port), port, targetPort: port, protocol: 'TCP' })),
    },
  };
}

export function sliceManifest(rs: RegistryServiceRef, plan: SlicePlan): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: plan.name,
      namespace: rs.namespace,
      labels: { [SERVICE_NAME_LABEL]: dnsServiceName(rs.serviceName), [MANAGED_BY_LABEL]: DNS_MANAGED_BY },
      ownerReferences: [ownerOf(rs)],
    },
    addressType: plan.family,
    ports: plan.port > 0 ? [{ name: portName(plan.port), port: plan.port, protocol: 'TCP' }] : [],
    endpoints: plan.endpoints.map((e) => ({
      addresses: [e.address],
      conditions: { ready: true },
      hostname: e.hostname,
    })),
  };
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function containsAll(
  actual: Readonly<Record<string, string>> | undefined,
  wanted: Readonly<Record<string, string>> | undefined,
): boolean {
  return Object.entries(wanted ?? {}).every(([k, v]) => actual?.[k] === v);
}

function metadataHolds(live: KubeObject, want: KubeObject): boolean {
  return (
    containsAll(live.metadata.labels, want.metadata.labels) &&
    containsAll(live.metadata.annotations, want.metadata.annotations) &&
    (want.metadata.ownerReferences ?? []).every((o) =>
      (live.metadata.ownerReferences ?? []).some((l) => l.uid === o.uid && l.controller === true),
    )
  );
}

function normalisedServicePorts(ports: unknown): unknown[] {
  return (Array.isArray(ports) ? ports.filter(isRecord) : []).map((p) => ({
    name: p.name ?? '',
    port: p.port,
    targetPort: p.targetPort ?? p.port,
    protocol: p.protocol ?? 'TCP',
  }));
}

/** Whether the live Service needs a write to match `want` (extra labels and annotations of others are kept). */
export function serviceDiffers(live: KubeObject, want: KubeObject): boolean {
  const ls = isRecord(live.spec) ? live.spec : {};
  const ws = want.spec as { ports: unknown };
  return (
    !metadataHolds(live, want) ||
    ls.selector !== undefined ||
    !sameJson(normalisedServicePorts(ls.ports), normalisedServicePorts(ws.ports))
  );
}

function normalisedSliceEndpoints(endpoints: unknown): unknown[] {
  return (Array.isArray(endpoints) ? endpoints.filter(isRecord) : []).map((e) => ({
    addresses: e.addresses,
    ready: !isRecord(e.conditions) || e.conditions.ready !== false,
    hostname: e.hostname,
    extra: Object.keys(e).filter(
      (k) =>
        ![
          'addresses',
          'conditions',
          'hostname',
          'topology',
          'zone',
          'nodeName',
          'targetRef',
          'deprecatedTopology',
          'hints',
        ].includes(k),
    ).length,
  }));
}

function normalisedSlicePorts(ports: unknown): unknown[] {
  return (Array.isArray(ports) ? ports.filter(isRecord) : []).map((p) => ({
    name: p.name ?? '',
    port: p.port,
    protocol: p.protocol ?? 'TCP',
    appProtocol: p.appProtocol,
  }));
}

/** Whether the live slice needs a write to match `want`. */
export function sliceDiffers(live: KubeObject, want: KubeObject): boolean {
  return (
    !metadataHolds(live, want) ||
    live.addressType !== want.addressType ||
    !sameJson(normalisedSlicePorts(live.ports), normalisedSlicePorts(want.ports)) ||
    !sameJson(normalisedSliceEndpoints(live.endpoints), normalisedSliceEndpoints(want.endpoints))
  );
}

/** `want`'s content on top of `live` (its resourceVersion, and labels, annotations and owners others added), for a PUT. */
export function overlay(live: KubeObject, want: KubeObject): KubeObject {
  const owners = [
    ...(want.metadata.ownerReferences ?? []),
    ...(live.metadata.ownerReferences ?? []).filter(
      (o) => !(want.metadata.ownerReferences ?? []).some((w) => w.uid === o.uid),
    ),
  ];
  const out: KubeObject = {
    ...live,
    ...want,
    metadata: {
      ...live.metadata,
      labels: { ...live.metadata.labels, ...want.metadata.labels },
      annotations: { ...live.metadata.annotations, ...want.metadata.annotations },
      ownerReferences: owners,
    },
  };
  if (want.kind === 'Service') {
    const ls = isRecord(live.spec) ? live.spec : {};
    const { selector: _dropped, ...rest } = ls;
    out.spec = { ...rest, ...(want.spec as Record<string, unknown>) };
  }
  return out;
}
