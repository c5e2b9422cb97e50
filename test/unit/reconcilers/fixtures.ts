import type { KubeObject } from '../../../src/api/common/kube-object.js';

/** Chainable builders for the objects a reconciler sees in its cache. */
export function endpoint(name: string, spec: Record<string, unknown> = { displayName: name }): ObjectBuilder {
  return new ObjectBuilder('prediction.endpoint-operator.dev/v1', 'PredictionEndpoint', name, spec);
}

export function deployedModel(name: string, endpointName: string, extra: Record<string, unknown> = {}): ObjectBuilder {
  return new ObjectBuilder('prediction.endpoint-operator.dev/v1', 'DeployedModel', name, {
    endpointRef: { name: endpointName },
    model: 'projects/demo/locations/us-central1/models/m1',
    automaticResources: { minReplicaCount: 1 },
    ...extra,
  });
}

export function registryService(name: string, serviceName: string): ObjectBuilder {
  return new ObjectBuilder('registry.endpoint-operator.dev/v1', 'RegistryService', name, { name: serviceName });
}

export function registryEndpoint(
  name: string,
  endpointName: string,
  extra: Record<string, unknown> = {},
): ObjectBuilder {
  return new ObjectBuilder('registry.endpoint-operator.dev/v1', 'RegistryEndpoint', name, {
    name: endpointName,
    address: '10.0.0.1',
    port: 8080,
    ...extra,
  });
}

let uidSeq = 0;

export class ObjectBuilder {
  private readonly obj: KubeObject;

  constructor(apiVersion: string, kind: string, name: string, spec: Record<string, unknown>) {
    uidSeq++;
    this.obj = {
      apiVersion,
      kind,
      metadata: {
        name,
        namespace: 'ns',
        uid: `uid-${name}-${uidSeq}`,
        generation: 1,
        creationTimestamp: '2026-01-01T00:00:00Z',
        resourceVersion: '1',
      },
      spec,
    };
  }

  inNamespace(namespace: string): this {
    this.obj.metadata.namespace = namespace;
    return this;
  }

  created(ts: string): this {
    this.obj.metadata.creationTimestamp = ts;
    return this;
  }

  generation(g: number): this {
    this.obj.metadata.generation = g;
    return this;
  }

  deleting(): this {
    this.obj.metadata.deletionTimestamp = '2026-01-02T00:00:00Z';
    return this;
  }

  status(status: Record<string, unknown>): this {
    this.obj.status = status;
    return this;
  }

  spec(patch: Record<string, unknown>): this {
    this.obj.spec = { ...(this.obj.spec as Record<string, unknown>), ...patch };
    return this;
  }

  build(): KubeObject {
    return structuredClone(this.obj);
  }
}
