/**
 * The demo's model servers for `dev`: one demo fraud model (dev/models/demo) per backend Service the
 * examples' DeployedModels name, speaking the protocol and answering to the model name the
 * DeployedModel says, listening in the cluster's model host (dev/cluster/network.ts); then a
 * selector-less Service and an EndpointSlice with the host's address for each (backend-services.ts),
 * so the operator sees them ready and the gateway routes to them.
 */
import type { BackendProtocol } from '../../src/api/prediction/v1/backend.js';
import { startDemoModelServer, type RunningDemoModelServer } from '../models/demo/index.js';
import { listenInModelHost, type ModelHost } from '../cluster/index.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';
import { applyObject } from './apply.js';
import {
  backendEndpointSlice,
  backendService,
  backendServiceRefs,
  hostedBackendFor,
  type BackendServiceRef,
} from './backend-services.js';

export interface DemoBackendPlan {
  readonly ref: BackendServiceRef;
  readonly protocol: BackendProtocol;
  readonly modelName: string;
  /** The demo model's version: the first backend serves v1, the next v2 (two versions, so a split shows). */
  readonly version: 'v1' | 'v2';
}

export interface RunningDemoBackend extends DemoBackendPlan {
  readonly server: RunningDemoModelServer;
}

/** One plan per backend Service among the DeployedModels of `objects`, in the order they appear. */
export function demoBackendPlan(objects: readonly KubeObject[]): DemoBackendPlan[] {
  return backendServiceRefs(objects).flatMap((ref, i) => {
    const model = objects.find(
      (o) =>
        o.kind === 'DeployedModel' &&
        (o.metadata.namespace ?? 'default') === ref.namespace &&
        backendOfObject(o)?.service?.name === ref.name,
    );
    const backend = model === undefined ? undefined : backendOfObject(model);
    if (backend?.protocol === undefined || backend.modelName === undefined) return [];
    return [{ ref, protocol: backend.protocol, modelName: backend.modelName, version: i % 2 === 0 ? 'v1' : 'v2' }];
  });
}

function backendOfObject(
  o: KubeObject,
): { service?: { name?: unknown }; protocol?: BackendProtocol; modelName?: string } | undefined {
  const backend = (o.spec as { backend?: unknown } | undefined)?.backend;
  if (typeof backend !== 'object' || backend === null) return undefined;
  const b = backend as Record<string, unknown>;
  const protocol = b.protocol === 'KServeV1' || b.protocol === 'OpenInferenceV2' ? b.protocol : undefined;
  return {
    ...(typeof b.service === 'object' && b.service !== null ? { service: b.service as { name?: unknown } } : {}),
    ...(protocol === undefined ? {} : { protocol }),
    ...(typeof b.modelName === 'string' ? { modelName: b.modelName } : {}),
  };
}

/** Starts one demo model server per plan in `host`, on `ports[i]` (0 or absent = any free port); stops them all on failure. */
export async function startDemoBackends(
  plans: readonly DemoBackendPlan[],
  ports: readonly number[],
  host: Pick<ModelHost, 'netns' | 'address'>,
): Promise<RunningDemoBackend[]> {
  const running: RunningDemoBackend[] = [];
  try {
    for (const [i, plan] of plans.entries()) {
      const socket = await listenInModelHost(host, ports[i] ?? 0);
      const server = await startDemoModelServer({
        protocol: plan.protocol,
        modelName: plan.modelName,
        version: plan.version,
        host: host.address,
        socket,
      });
      running.push({ ...plan, server });
    }
  } catch (err) {
    await stopDemoBackends(running);
    throw err;
  }
  return running;
}

export async function stopDemoBackends(backends: readonly RunningDemoBackend[]): Promise<void> {
  await Promise.allSettled(backends.map((b) => b.server.close()));
}

/** The Service and EndpointSlice of each running demo server (at `address`), applied. */
export async function publishDemoBackends(
  client: KubeClient,
  backends: readonly RunningDemoBackend[],
  address: string,
): Promise<void> {
  for (const b of backends) {
    const hosted = hostedBackendFor(b.ref, address, b.server.port);
    await applyObject(client, backendService(hosted));
    await applyObject(client, backendEndpointSlice(hosted));
  }
}
