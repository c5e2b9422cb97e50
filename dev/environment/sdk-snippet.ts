/**
 * The Python snippet `npm start` prints when it runs the real node: the documented Vertex AI SDK flow (google-cloud-aiplatform,
 * unmodified) through the gateway's write API, as a data scientist writes it: upload the iris model from its
 * `gs://` artifact (the bucket map sends it to the OCI artifact in the local registry), create an endpoint, deploy
 * on the real node's machine type (the SDK waits for the real rollout) and predict. Run as printed, with the SDK's
 * Python set this machine installed (dev/models/python-packages.ts `aiplatform-sdk`), the gateway's CA trusted as
 * Google's libraries read it, and the demo caller's token ($TOKEN) as the credentials.
 */
import { IRIS_INSTANCES } from '../models/iris-model.js';
import type { PythonPackages } from '../models/python-packages.js';

export interface SdkSnippetInput {
  /** `host:port` of the gateway, as `aiplatform.init(api_endpoint=...)` takes it. */
  readonly apiEndpoint: string;
  readonly project: string;
  readonly location: string;
  /** The model server's image in the node's registry. */
  readonly image: string;
  readonly artifactUri: string;
  readonly machineType: string;
  /** The SDK's Python set: the interpreter, its arguments and its PYTHONPATH directory. */
  readonly python: Pick<PythonPackages, 'python' | 'pythonArgs' | 'dir'>;
}

/** `projects/{p}/locations/{l}` of a gateway endpoint URL (`https://host:port/v1/projects/p/locations/l/...`). */
export function projectAndLocation(url: string): { project: string; location: string } | undefined {
  const m = /\/v1\/projects\/([^/]+)\/locations\/([^/]+)\//.exec(url);
  return m?.[1] !== undefined && m[2] !== undefined ? { project: m[1], location: m[2] } : undefined;
}

/**
 * The snippet's lines: a shell command with a here-document, whose Python lines and terminator start at the first
 * column (Python refuses an indented script, and the shell looks for `EOF` alone on its line).
 */
export function sdkSnippetLines(i: SdkSnippetInput): string[] {
  const instances = JSON.stringify(IRIS_INSTANCES).replaceAll(',', ', ');
  const python = [i.python.python, ...i.python.pythonArgs].join(' ');
  return [
    '',
    "The Vertex AI Python SDK (google-cloud-aiplatform, unmodified) uploads, deploys and predicts through the gateway's",
    `write API: a Model and an endpoint of ${i.project}, a DeployedModel on the real node (deploy() waits for its rollout);`,
    '`kubectl get models,pe,dm -o yaml --show-managed-fields` then shows them, written by vertex-api/<you>:',
    '',
    'export GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="$GATEWAY_CA" REQUESTS_CA_BUNDLE="$GATEWAY_CA"',
    `PYTHONNOUSERSITE=1 PYTHONPATH=${i.python.dir} ${python} - <<'EOF'`,
    'import os',
    'from google.cloud import aiplatform',
    'from google.oauth2.credentials import Credentials',
    `aiplatform.init(project="${i.project}", location="${i.location}", api_endpoint="${i.apiEndpoint}",`,
    '                credentials=Credentials(token=os.environ["TOKEN"]))',
    `model = aiplatform.Model.upload(display_name="iris", artifact_uri="${i.artifactUri}",`,
    `                                serving_container_image_uri="${i.image}")`,
    'endpoint = aiplatform.Endpoint.create(display_name="iris")',
    `model.deploy(endpoint=endpoint, machine_type="${i.machineType}", min_replica_count=1, traffic_percentage=100)`,
    `print(endpoint.predict(instances=${instances}).predictions)`,
    'EOF',
  ];
}
