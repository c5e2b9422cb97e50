/**
 * Pods on the real node reach the apiserver as pods do: through the `kubernetes` Service, whose cluster IP
 * kube-proxy (in the node namespace) sends to the EndpointSlice written here, naming this namespace's end of
 * the node's link. The apiserver listens on loopback only (nothing beyond this machine should reach it), so a
 * TCP relay in this process carries that one address and port to it, bytes unchanged: TLS is end to end, and
 * the apiserver's certificate names the Service's cluster IP (credentials.ts).
 */
import { ControlPlaneError } from '../../host/errors.js';
import { startTcpRelay } from '../../host/tcp-relay.js';
import { NODE_HOST_ADDRESS } from './node-network.js';
import { apiserverRequest } from '../readiness.js';

export interface ApiserverForPods {
  close(): Promise<void>;
}

/** Starts the relay and writes the `kubernetes` Service's EndpointSlice (the apiserver's own reconciler is off: flags.ts). */
export async function exposeApiserverToPods(server: string, caPem: string, token: string): Promise<ApiserverForPods> {
  const port = Number(new URL(server).port);
  const relay = await startTcpRelay({ host: NODE_HOST_ADDRESS, port }, () => port);
  const slice = {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      labels: {
        'kubernetes.io/service-name': 'kubernetes',
        'endpointslice.kubernetes.io/managed-by': 'devcluster.endpoint-operator.dev',
      },
    },
    addressType: 'IPv4',
    endpoints: [{ addresses: [NODE_HOST_ADDRESS], conditions: { ready: true } }],
    ports: [{ name: 'https', port, protocol: 'TCP' }],
  };
  const r = await apiserverRequest(server, 'POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
    caPem,
    token,
    body: slice,
  });
  if (r.status !== 201) {
    await relay.close();
    throw new ControlPlaneError(
      `writing the kubernetes Service's EndpointSlice failed: ${r.status} ${r.body.slice(0, 300)}`,
    );
  }
  return { close: () => relay.close() };
}
