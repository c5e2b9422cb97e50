/**
 * A Service and the EndpointSlice behind it, for a model server the cluster does not run as a Pod: the
 * demo servers `dev` starts in the local cluster's model host (dev/cluster/network.ts), or a test's.
 * The Service has no selector and its slice is written here, as any controller outside Kubernetes does
 * (the managed-by label tells the EndpointSlice controller to leave it alone).
 */
import { MANAGED_BY_LABEL, SERVICE_NAME_LABEL } from '../../src/runtime/endpoint-slices.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';

export const DEV_SLICE_MANAGER = 'endpoint-operator-dev';

export interface HostedBackend {
  /** The Service name (what a DeployedModel's spec.backend.service.name says). */
  readonly name: string;
  readonly namespace: string;
  /** The Service port and its name (what spec.backend.service.port says, by number or name). */
  readonly servicePort: number;
  readonly portName: string;
  /** Where the server listens: an IPv4 address (not loopback: the apiserver refuses it in a slice) and the port the slice sends calls to. */
  readonly address: string;
  readonly targetPort: number;
  /** The endpoint's `conditions.ready` (default true). */
  readonly ready?: boolean;
}

export function backendService(b: HostedBackend): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: b.name,
      namespace: b.namespace,
      labels: { 'app.kubernetes.io/part-of': 'endpoint-operator-demo' },
    },
    spec: { ports: [{ name: b.portName, port: b.servicePort, protocol: 'TCP' }] },
  };
}

export function backendEndpointSlice(b: HostedBackend): KubeObject {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${b.name}-hosted`,
      namespace: b.namespace,
      labels: { [SERVICE_NAME_LABEL]: b.name, [MANAGED_BY_LABEL]: DEV_SLICE_MANAGER },
    },
    addressType: 'IPv4',
    ports: [{ name: b.portName, port: b.targetPort, protocol: 'TCP' }],
    endpoints: [{ addresses: [b.address], conditions: { ready: b.ready ?? true } }],
  };
}

/** A Service a DeployedModel's `spec.backend.service` names: its namespace, name and port (number or name). */
export interface BackendServiceRef {
  readonly namespace: string;
  readonly name: string;
  readonly port: number | string;
}

/** The distinct Services the DeployedModels among `objects` name as their backends. */
export function backendServiceRefs(objects: readonly KubeObject[]): BackendServiceRef[] {
  const refs = new Map<string, BackendServiceRef>();
  for (const o of objects) {
    if (o.kind !== 'DeployedModel') continue;
    const service = (o.spec as { backend?: { service?: { name?: unknown; port?: unknown } } } | undefined)?.backend
      ?.service;
    if (typeof service?.name !== 'string' || (typeof service.port !== 'number' && typeof service.port !== 'string'))
      continue;
    const namespace = o.metadata.namespace ?? 'default';
    refs.set(`${namespace}/${service.name}`, { namespace, name: service.name, port: service.port });
  }
  return [...refs.values()];
}

/** The hosted backend that answers `ref`: a named port is Service port 80 by that name; a number is itself, named http. */
export function hostedBackendFor(ref: BackendServiceRef, address: string, targetPort: number): HostedBackend {
  return typeof ref.port === 'number'
    ? { name: ref.name, namespace: ref.namespace, servicePort: ref.port, portName: 'http', address, targetPort }
    : { name: ref.name, namespace: ref.namespace, servicePort: 80, portName: ref.port, address, targetPort };
}
