/**
 * Where a DeployedModel with `spec.containerSpec` is served: the name of the objects the operator creates
 * for it, and the backend the gateway routes to (the created Service's `http` port). One definition for
 * the operator, which creates the objects, and the gateway, which routes to them.
 */
import { createHash } from 'node:crypto';
import type { DeployedModelBackend } from './backend.js';
import type { ContainerSpec } from './container-spec.js';

/** The name of the Service port (and container port) the model server listens on. */
export const SERVING_PORT_NAME = 'http';

/** `dm-<name>` when it is a valid Service name, else a truncated form with a hash of the full name (unique per model). */
export function servingName(modelName: string): string {
  const plain = `dm-${modelName}`;
  if (plain.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(plain)) return plain;
  const hash = createHash('sha256').update(modelName).digest('hex').slice(0, 8);
  const base = modelName.replace(/[^-a-z0-9]/g, '-').slice(0, 50).replace(/-+$/, '');
  return `dm-${base}-${hash}`;
}

/**
 * The backend of a containerSpec model, as if the user had written `spec.backend`, or why there is none:
 * the `Vertex` protocol (the body posted as is to predictRoute) is not yet a gateway protocol.
 */
export function containerBackend(modelName: string, container: ContainerSpec): { backend: DeployedModelBackend } | { unusable: string } {
  const protocol = container.protocol ?? 'Vertex';
  if (protocol === 'Vertex') return { unusable: 'spec.containerSpec.protocol is Vertex, which the gateway does not route yet; use KServeV1 or OpenInferenceV2' };
  return { backend: { service: { name: servingName(modelName), port: SERVING_PORT_NAME }, protocol, modelName: container.modelName ?? modelName } };
}
