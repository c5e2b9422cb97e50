/**
 * DeployedModel `spec.containerSpec`: the model server the operator runs, in the shape of Vertex AI's
 * `google.cloud.aiplatform.v1.ModelContainerSpec` (and its `Probe`), so a container built for Vertex's
 * custom-container contract is described the same way here. The operator turns it into a Deployment,
 * a Service, an autoscaler and a disruption budget (src/reconcilers/serving/).
 *
 * Two fields are this operator's own, since Vertex has one wire protocol and this gateway knows three:
 * `protocol` (default `Vertex`: the request body is posted as is to `predictRoute`) and `modelName`
 * (the `{name}` of KServe V1 / Open Inference V2 paths).
 */
import { z } from 'zod';
import { validations } from '../../crd/cel.js';
import { BACKEND_MODEL_NAME } from './backend.js';

export const CONTAINER_PROTOCOLS = ['Vertex', 'KServeV1', 'OpenInferenceV2'] as const;
export type ContainerProtocol = (typeof CONTAINER_PROTOCOLS)[number];

/** Vertex's default container port (ModelContainerSpec.ports). */
export const DEFAULT_CONTAINER_PORT = 8080;
/** ModelContainerSpec.deployment_timeout: "If not set, defaults to 20 minutes. Max 2 hours". */
export const DEFAULT_DEPLOYMENT_TIMEOUT_SECONDS = 20 * 60;
export const MAX_DEPLOYMENT_TIMEOUT_SECONDS = 2 * 60 * 60;
/** A google.protobuf.Duration in its JSON form: seconds with up to nine fractional digits and an `s`. */
export const DURATION = /^[0-9]{1,10}(\.[0-9]{1,9})?s$/;
/** An environment variable name as Kubernetes accepts it (C identifier rules loosened by KEP-4369 are not assumed). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An HTTP path a route or probe names. */
export const HTTP_PATH = /^\/[^\s?#]*$/;

/** Seconds of a Duration string that matched DURATION (fractions kept). */
export function durationSeconds(text: string): number {
  return Number(text.slice(0, -1));
}

const port = z
  .number()
  .int({ error: 'must be an integer' })
  .min(1, { error: 'must be a port number from 1 to 65535' })
  .max(65535, { error: 'must be a port number from 1 to 65535' });
const seconds = (what: string) =>
  z
    .number()
    .int({ error: 'must be an integer' })
    .min(0)
    .max(2147483647)
    .optional()
    .meta({ description: `${what}; optional.` });
const strings = (max: number) => z.array(z.string().max(4096)).max(max);

export const probeSchema = z
  .object({
    exec: z
      .object({
        command: strings(64)
          .optional()
          .meta({ description: 'command run in the container; exit 0 is healthy; optional.' }),
      })
      .optional()
      .meta({
        description:
          'exec runs a command in the container; at most one of exec, httpGet, grpc and tcpSocket; optional.',
      }),
    httpGet: z
      .object({
        path: z
          .string()
          .max(2048)
          .regex(HTTP_PATH, { error: 'must be an absolute HTTP path such as /health' })
          .optional()
          .meta({ description: 'path of the GET request (default /); optional.' }),
        port: port
          .optional()
          .meta({ description: "port of the GET request (default the container's port); optional." }),
        host: z
          .string()
          .max(253)
          .optional()
          .meta({ description: "host to connect to (default the pod's IP); optional." }),
        scheme: z
          .enum(['HTTP', 'HTTPS'])
          .optional()
          .meta({ description: 'scheme, HTTP or HTTPS (default HTTP); optional.' }),
        httpHeaders: z
          .array(
            z.object({
              name: z.string().min(1).max(256).meta({ description: 'name of the header; required.' }),
              value: z.string().max(4096).meta({ description: 'value of the header; required.' }),
            }),
          )
          .max(16)
          .optional()
          .meta({ description: 'httpHeaders sent with the request; optional.' }),
      })
      .optional()
      .meta({
        description:
          'httpGet sends an HTTP GET; 2xx and 3xx are healthy; at most one of exec, httpGet, grpc and tcpSocket; optional.',
      }),
    grpc: z
      .object({
        port: port
          .optional()
          .meta({ description: "port of the gRPC health service (default the container's port); optional." }),
        service: z
          .string()
          .max(256)
          .optional()
          .meta({ description: 'service name sent in the gRPC HealthCheckRequest; optional.' }),
      })
      .optional()
      .meta({
        description:
          'grpc calls the gRPC health-checking protocol; at most one of exec, httpGet, grpc and tcpSocket; optional.',
      }),
    tcpSocket: z
      .object({
        port: port.optional().meta({ description: "port to connect to (default the container's port); optional." }),
        host: z
          .string()
          .max(253)
          .optional()
          .meta({ description: "host to connect to (default the pod's IP); optional." }),
      })
      .optional()
      .meta({
        description: 'tcpSocket opens a TCP connection; at most one of exec, httpGet, grpc and tcpSocket; optional.',
      }),
    periodSeconds: seconds('periodSeconds is how often the probe runs (default 10)'),
    timeoutSeconds: seconds('timeoutSeconds after which the probe fails (default 1)'),
    failureThreshold: seconds('failureThreshold is how many failures in a row count as failed (default 3)'),
    successThreshold: seconds('successThreshold is how many successes in a row count as healthy (default 1)'),
    initialDelaySeconds: seconds('initialDelaySeconds before the first probe (default 0)'),
  })
  .meta(
    validations({
      rule: '[has(self.exec), has(self.httpGet), has(self.grpc), has(self.tcpSocket)].filter(x, x).size() <= 1',
      message: 'at most one of exec, httpGet, grpc and tcpSocket may be set',
      reason: 'FieldValueForbidden',
    }),
  );
export type Probe = z.infer<typeof probeSchema>;

const probe = (what: string) => probeSchema.optional().meta({ description: `${what}; optional.` });

export const containerSpecSchema = z.object({
  imageUri: z.string().min(1).max(1024).meta({
    description: 'imageUri of the model server image, for example us-docker.pkg.dev/p/r/server:1.2; required.',
  }),
  command: strings(64).optional().meta({ description: "command replaces the image's ENTRYPOINT; optional." }),
  args: strings(256).optional().meta({ description: "args replace the image's CMD; optional." }),
  env: z
    .array(
      z.object({
        name: z
          .string()
          .min(1)
          .max(256)
          .regex(ENV_NAME, { error: 'must be an environment variable name: a letter or _, then letters, digits and _' })
          .meta({ description: 'name of the variable; required.' }),
        value: z
          .string()
          .max(32768)
          .meta({ description: 'value of the variable; $(NAME) refers to an earlier one; required.' }),
      }),
    )
    .max(128)
    .optional()
    .meta({
      description:
        'env variables set in the container, besides the AIP_* variables the operator sets (which win); optional.',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    }),
  ports: z
    .array(z.object({ containerPort: port.meta({ description: 'containerPort the server listens on; required.' }) }))
    .max(16)
    .optional()
    .meta({
      description:
        'ports of the server; only the first is used: calls and the health check go to it (default [{containerPort: 8080}]); optional.',
    }),
  predictRoute: z
    .string()
    .max(2048)
    .regex(HTTP_PATH, { error: 'must be an absolute HTTP path such as /predict' })
    .optional()
    .meta({
      description:
        'predictRoute is the path the Vertex protocol posts predict calls to (default /v1/endpoints/{endpoint}/deployedModels/{id}:predict); optional.',
    }),
  healthRoute: z
    .string()
    .max(2048)
    .regex(HTTP_PATH, { error: 'must be an absolute HTTP path such as /health' })
    .optional()
    .meta({
      description:
        'healthRoute is the path of the readiness check (default /v1/endpoints/{endpoint}/deployedModels/{id}); optional.',
    }),
  startupProbe: probe(
    'startupProbe replaces the default startup check (a TCP check on the port, for up to deploymentTimeout)',
  ),
  healthProbe: probe('healthProbe replaces the default readiness check (HTTP GET on healthRoute)'),
  livenessProbe: probe('livenessProbe replaces the default liveness check (TCP on the port)'),
  deploymentTimeout: z
    .string()
    .max(21)
    .regex(DURATION, { error: 'must be a duration in seconds such as 1800s' })
    .optional()
    .meta({
      description:
        'deploymentTimeout is how long replicas may take to become ready before the deployment is Stalled (DeploymentTimeout), at most 7200s (default 1200s); optional.',
      ...validations({
        rule: "!self.matches('^[0-9]{1,10}(\\\\.[0-9]{1,9})?s$') || duration(self) <= duration('7200s')",
        message: 'must be at most 7200s (2 hours)',
      }),
    }),
  sharedMemorySizeMb: z.number().int({ error: 'must be an integer' }).min(1).max(1048576).optional().meta({
    description: "sharedMemorySizeMb is the size of /dev/shm in MiB (default the container runtime's); optional.",
  }),
  protocol: z.enum(CONTAINER_PROTOCOLS).optional().meta({
    description:
      'protocol the server speaks: Vertex (the request body is posted as is to predictRoute), KServeV1 or OpenInferenceV2 (default Vertex); an extension of this operator; optional.',
  }),
  modelName: z
    .string()
    .min(1)
    .max(253)
    .regex(BACKEND_MODEL_NAME, {
      error: 'must be a model name: alphanumerics, dots, dashes and underscores, alphanumeric at both ends',
    })
    .optional()
    .meta({
      description:
        "modelName is the model's name on a KServeV1 or OpenInferenceV2 server (default metadata.name); an extension of this operator; optional.",
    }),
});
export type ContainerSpec = z.infer<typeof containerSpecSchema>;

/** The metrics Vertex scales a DeployedModel on (AutoscalingMetricSpec.metric_name). */
export const AutoscalingMetric = {
  cpu: 'aiplatform.googleapis.com/prediction/online/cpu/utilization',
  acceleratorDutyCycle: 'aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle',
  requestCount: 'aiplatform.googleapis.com/prediction/online/request_count',
} as const;
export const AUTOSCALING_METRICS = Object.values(AutoscalingMetric);

/** Vertex's DeployedModel deployment stages (google.cloud.aiplatform.v1.DeploymentStage). */
export const DEPLOYMENT_STAGES = [
  'DEPLOYMENT_STAGE_UNSPECIFIED',
  'STARTING_DEPLOYMENT',
  'PREPARING_MODEL',
  'CREATING_SERVING_CLUSTER',
  'ADDING_NODES_TO_CLUSTER',
  'GETTING_CONTAINER_IMAGE',
  'STARTING_MODEL_SERVER',
  'FINISHING_UP',
  'DEPLOYMENT_TERMINATED',
] as const;
export type DeploymentStage = (typeof DEPLOYMENT_STAGES)[number];

export const servingObjectsSchema = z.object({
  deployment: z
    .string()
    .optional()
    .meta({ description: 'deployment is the name of the Deployment running the replicas; optional.' }),
  service: z
    .string()
    .optional()
    .meta({ description: 'service is the name of the Service the gateway routes to; optional.' }),
  horizontalPodAutoscaler: z.string().optional().meta({
    description:
      'horizontalPodAutoscaler is the name of the HPA (only when maxReplicaCount > minReplicaCount); optional.',
  }),
  podDisruptionBudget: z
    .string()
    .optional()
    .meta({ description: 'podDisruptionBudget is the name of the PDB (only when minReplicaCount >= 2); optional.' }),
  networkPolicy: z.string().optional().meta({
    description:
      "networkPolicy is the name of the NetworkPolicy that admits only the gateway to the replicas' port (absent when the operator makes none); optional.",
  }),
});
export type ServingObjects = z.infer<typeof servingObjectsSchema>;
