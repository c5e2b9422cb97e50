/**
 * Where a DeployedModel with `spec.containerSpec` is served: the name of the objects the operator creates
 * for it, and the backend the gateway routes to (the created Service's `http` port). One definition for
 * the operator, which creates the objects, and the gateway, which routes to them.
 */
import { createHash } from 'node:crypto';
import type { DeployedModelBackend } from './backend.js';
import type { ContainerSpec } from './container-spec.js';

/** The Service of a model server speaking Vertex's custom-container protocol: its body goes as is to `predictRoute`. */
export interface VertexBackend {
  readonly service: { readonly name: string; readonly port: string };
  readonly url?: undefined;
  readonly protocol: 'Vertex';
  readonly predictRoute: string;
  readonly modelName: string;
}

/** What the gateway routes a model to: `spec.backend`, or the Service of its `spec.containerSpec`. */
export type ServedBackend = DeployedModelBackend | VertexBackend;

/** Vertex's default routes, as its custom-container contract gives them (`AIP_PREDICT_ROUTE`, `AIP_HEALTH_ROUTE`). */
export function servingRoutes(
  endpointName: string,
  id: string,
  container: Pick<ContainerSpec, 'predictRoute' | 'healthRoute'>,
): { predict: string; health: string } {
  const base = `/v1/endpoints/${endpointName}/deployedModels/${id}`;
  return { predict: container.predictRoute ?? `${base}:predict`, health: container.healthRoute ?? base };
}

/** The name of the Service port (and container port) the model server listens on. */
export const SERVING_PORT_NAME = 'http';

/** `dm-<name>` when it is a valid Service name, else a truncated form with a hash of the full name (unique per model). */
export function servingName(modelName: string): string {
  const plain = `dm-${modelName}`;
  if (plain.length <= 63 && /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(plain)) return plain;
  const hash = createHash('sha256').update(modelName).digest('hex').slice(0, 8);
  const base = modelName
    .replace(/[^-a-z0-9]/g, '-')
    .slice(0, 50)
    .replace(/-+$/, '');
  return `dm-${base}-${hash}`;
}

/**
 * The backend of a containerSpec model, as if the user had written `spec.backend`: its Service's `http`
 * port, with Vertex's predict route for the `Vertex` protocol (the default).
 */
export function containerBackend(
  model: { name: string; endpointName: string; id: string },
  container: ContainerSpec,
): ServedBackend {
  const service = { name: servingName(model.name), port: SERVING_PORT_NAME };
  const modelName = container.modelName ?? model.name;
  const protocol = container.protocol ?? 'Vertex';
  if (protocol === 'Vertex')
    return {
      service,
      protocol,
      predictRoute: servingRoutes(model.endpointName, model.id, container).predict,
      modelName,
    };
  return { service, protocol, modelName };
}

/**
 * The custom metrics the HPA asks the cluster's custom-metrics adapter for; docs/autoscaling.md and
 * deploy/prometheus-adapter-values.yaml give the adapter rules that serve them.
 */
export const CustomMetric = {
  /** Per pod, percent: each replica's accelerator duty cycle (NVIDIA's DCGM exporter). */
  acceleratorDutyCycle: 'accelerator_duty_cycle',
  /** Per DeployedModel: the calls the gateway answered for it per minute. */
  requestsPerMinute: 'prediction_requests_per_minute',
} as const;
