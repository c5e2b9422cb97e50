/**
 * Whether a DeployedModel's model server can be called, as a pure function of its `spec.backend`
 * and the Service and EndpointSlices the operator's caches hold. The same question the gateway
 * asks before it routes (src/runtime/endpoint-slices.ts answers it for both): a model whose Service
 * is missing, whose port the Service lacks, or whose port has no ready endpoint would only answer
 * 503, so it is `Ready=False` (BackendUnavailable) with a message that says which.
 *
 * A URL backend lies outside the cluster: it is not probed (a probe from the operator would not
 * prove the gateway can reach it, and would turn readiness into polling), so it never holds
 * readiness back.
 */
import type { DeployedModelBackend } from '../api/prediction/v1/backend.js';
import { findServicePort, readyAddresses, type EndpointSlice, type Service } from '../runtime/endpoint-slices.js';

export interface BackendWorld {
  /** `spec.backend` as decoded, or a containerSpec model's own Service; undefined = no backend (recorded, not callable). */
  readonly backend: Pick<DeployedModelBackend, 'service' | 'url'> | undefined;
  readonly namespace: string;
  /** The Service `spec.backend.service.name` names, if it exists. */
  readonly service: Service | undefined;
  /** The EndpointSlices labelled with that Service's name. */
  readonly slices: readonly EndpointSlice[];
}

export type BackendReadiness =
  | { readonly state: 'none' }
  | { readonly state: 'url'; readonly url: string }
  | { readonly state: 'ready'; readonly summary: string }
  | { readonly state: 'unavailable'; readonly message: string };

export function backendReadiness(world: BackendWorld): BackendReadiness {
  const { backend, namespace, service } = world;
  if (backend === undefined) return { state: 'none' };
  if (backend.url !== undefined) return { state: 'url', url: backend.url };
  const ref = backend.service;
  if (ref === undefined) return { state: 'none' }; // the validator reports it
  const portText = typeof ref.port === 'number' ? String(ref.port) : JSON.stringify(ref.port);
  if (service === undefined) {
    return {
      state: 'unavailable',
      message: `spec.backend.service.name: Service "${ref.name}" not found in namespace "${namespace}"; create it (the model becomes Ready once its port ${portText} has a ready endpoint)`,
    };
  }
  const port = findServicePort(service, ref.port);
  if (port === undefined) {
    const known = service.ports.map((p) => (p.name === '' ? String(p.port) : `${p.port} (${p.name})`)).join(', ');
    return {
      state: 'unavailable',
      message: `spec.backend.service.port: Service "${ref.name}" has no port ${portText} (its ports: ${known === '' ? 'none' : known}); name one of its ports by number or name`,
    };
  }
  const ready = readyAddresses(world.slices, port);
  const portLabel = port.name === '' ? String(port.port) : `${port.port} (${port.name})`;
  if (ready.length === 0) {
    const total = countEndpoints(world.slices);
    const seen =
      total === 0
        ? 'no EndpointSlice lists an endpoint for it'
        : `${total} endpoint(s) listed, none ready on that port`;
    return {
      state: 'unavailable',
      message: `Service "${ref.name}" port ${portLabel} has no ready endpoint (${seen}); check that the model server's pods are running and pass their readiness probe`,
    };
  }
  return { state: 'ready', summary: `Service "${ref.name}" port ${portLabel}` };
}

function countEndpoints(slices: readonly EndpointSlice[]): number {
  return slices.reduce((n, s) => n + s.endpoints.length, 0);
}
