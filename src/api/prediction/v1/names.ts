import { PROJECT_NUMBER_PATTERN, projectNumberDigitsProblem } from '../../common/project-number.js';
import { truncateText } from '../../common/text.js';

/**
 * The resource-name and identifier formats of the prediction API, shared by the zod schemas
 * (which copy the RE2-compatible patterns into the CRD) and the validators (which add the rules a
 * pattern cannot carry, such as lengths counted in code points or UTF-8 bytes).
 *
 * Every pattern here is valid in both JavaScript (with the `u` flag) and Go RE2: no lookaround,
 * no backreferences, `\p{..}` classes only where RE2 knows them.
 */

/** The group every prediction kind belongs to. */
export const PREDICTION_GROUP = 'prediction.endpoint-operator.dev';

/** Holds the deletion of a PredictionEndpoint or DeployedModel until the operator has undeployed. */
export const PREDICTION_FINALIZER = `${PREDICTION_GROUP}/finalizer`;

/** A deployed-model id: 1 to 10 decimal digits (Vertex AI DeployedModel.id). */
export const DEPLOYED_MODEL_ID = /^[0-9]{1,10}$/;

/**
 * Label keys and values, following the Google Cloud label rules ("lowercase letters, numeric
 * characters, underscores and dashes; international characters are allowed"). Decision, based on
 * the regex Cloud Resource Manager documents (`[\p{Ll}\p{Lo}][\p{Ll}\p{Lo}\p{N}_-]*`):
 * - a key starts with a lowercase letter of any script (`\p{Ll}`: `a`, `é`, `ß`, `д`) or a letter
 *   of a script without case (`\p{Lo}`: CJK, kana, Hangul, Arabic, Hebrew, Thai...);
 * - after it come such letters, modifier letters (`\p{Lm}`, e.g. the kana prolonged-sound mark
 *   in `チーム` and the ideographic iteration mark `々`), combining marks (`\p{Mn}`, `\p{Mc}`, which
 *   Devanagari, Thai or Tamil words cannot be written without, and which never make a letter upper
 *   case), numeric characters (`\p{N}`), `_` and `-`;
 * - values use the same characters and may be empty or start with any of them;
 * - upper-case and title-case letters, spaces, other punctuation and symbols (emoji) are refused.
 * Lengths (1..64 code points for keys, 0..64 for values) are checked separately, because a regex
 * cannot count code points the same way in the CRD and in the validator.
 */
export const LABEL_KEY = /^[\p{Ll}\p{Lo}][\p{Ll}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{N}_-]*$/u;
export const LABEL_VALUE = /^[\p{Ll}\p{Lm}\p{Lo}\p{Mn}\p{Mc}\p{N}_-]*$/u;
export const LABEL_MAX_CODE_POINTS = 64;
export const MAX_LABELS = 64;
/**
 * At most this many deployed models share an endpoint's traffic: a bound the apiserver needs to keep the
 * cost of the CRD's rules over the map within its budget.
 */
export const MAX_TRAFFIC_SPLIT_ENTRIES = 1000;

/**
 * `projects/{project number}/global/networks/{network}`: a VPC network, named by the project NUMBER
 * (Vertex AI refuses a project id there) and a Compute Engine resource name (RFC 1035 label, ≤63).
 */
export const NETWORK = new RegExp(
  `^projects/${PROJECT_NUMBER_PATTERN}/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`,
);

/** The detail of a refused network name: says so when a project id was given where the number belongs. */
export function networkNameDetail(input: unknown): string {
  const shape = 'must be projects/{project number}/global/networks/{network name}';
  if (typeof input !== 'string') return shape;
  const match = /^projects\/([^/]+)\/global\/networks\/[^/]+$/.exec(input);
  if (match && !/^[0-9]+$/.test(match[1] ?? ''))
    return `${shape}: the project must be the project NUMBER (digits), not a project id such as ${JSON.stringify(truncate(match[1] ?? ''))}`;
  const numberProblem = match ? projectNumberDigitsProblem(match[1] ?? '') : undefined;
  if (numberProblem !== undefined) return `${shape}: ${numberProblem}`;
  if (match) return `${shape}: the network name must be a lowercase RFC 1035 label of at most 63 characters`;
  return shape;
}

/** A Cloud KMS key: `projects/*\/locations/*\/keyRings/*\/cryptoKeys/*`, each segment non-empty. */
export const KMS_KEY_NAME = /^projects\/[^/]+\/locations\/[^/]+\/keyRings\/[^/]+\/cryptoKeys\/[^/]+$/;

/**
 * A Vertex AI model: `projects/{project}/locations/{location}/models/{model}` with an optional
 * `@{version}` where the version is a version id (digits) or a version alias (lowercase letters,
 * digits and hyphens, starting with a lowercase letter, ≤128: the Model Registry alias rule, whose middle
 * characters may be upper case). Decision:
 * publisher models (`publishers/google/models/...`) are not deployable through this resource.
 */
export const MODEL =
  /^projects\/[^/@]+\/locations\/[^/@]+\/models\/[^/@]+(@([0-9]+|[a-z]([a-zA-Z0-9-]{0,126}[a-z0-9])?))?$/;

/** `projects/{project}/locations/{location}/models/{name}`: a Model's resource name in status. */
export function modelResourceName(project: string, location: string, name: string): string {
  return `projects/${project}/locations/${location}/models/${name}`;
}

/** The parts of a `spec.model` that matched MODEL; `at` is what follows `@`, if anything. */
export interface ModelNameParts {
  readonly project: string;
  readonly location: string;
  readonly model: string;
  readonly at: string | undefined;
}

export function parseModelName(text: string): ModelNameParts | undefined {
  if (!MODEL.test(text)) return undefined;
  const [path = '', at] = text.split('@');
  const [, project = '', , location = '', , model = ''] = path.split('/');
  return { project, location, model, at };
}

/** A machine type such as `n1-standard-4` or `a2-highgpu-1g`. */
export const MACHINE_TYPE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An accelerator type as Vertex AI spells it: `NVIDIA_TESLA_T4`, `NVIDIA_L4`, `TPU_V5_LITEPOD`. */
export const ACCELERATOR_TYPE = /^[A-Z][A-Z0-9_]*$/;

/** Kubernetes DNS-1123 subdomain (the name of the PredictionEndpoint a DeployedModel references). */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `projects/{project}/locations/{location}/endpoints/{name}`: the endpoint's resource name in status. */
export function endpointResourceName(project: string, location: string, name: string): string {
  return `projects/${project}/locations/${location}/endpoints/${name}`;
}

/**
 * The project of an endpoint's resource name. A PredictionEndpoint's `status.name` must be unique
 * in the cluster (the gateway finds endpoints by it), and `metadata.name` is unique only within a
 * namespace, so the namespace is the project, as Config Connector maps a namespace to a project.
 * The operator's `--project` setting is a template in which `{namespace}` is replaced (default
 * `{namespace}`; e.g. `acme-{namespace}` when several clusters share one name space of projects).
 */
export const NAMESPACE_PLACEHOLDER = '{namespace}';
export const DEFAULT_PROJECT_TEMPLATE = NAMESPACE_PLACEHOLDER;

export function endpointProject(template: string, namespace: string): string {
  return template.split(NAMESPACE_PLACEHOLDER).join(namespace);
}

/** Why a `--project` template cannot give every endpoint a unique name, or undefined when it can. */
export function projectTemplateProblem(template: string): string | undefined {
  if (!template.includes(NAMESPACE_PLACEHOLDER)) {
    return `must contain ${NAMESPACE_PLACEHOLDER} (a fixed project would give endpoints of the same name in two namespaces the same status.name)`;
  }
  // Namespace names are DNS-1123 labels; what surrounds them must keep the name one URL path segment.
  if (!/^[a-z0-9-]*$/.test(template.split(NAMESPACE_PLACEHOLDER).join(''))) {
    return `may contain only lowercase letters, digits and dashes besides ${NAMESPACE_PLACEHOLDER}`;
  }
  return undefined;
}

/** The endpoint's `status.name` under the operator's project template and location. */
export function endpointNameOf(
  endpoint: { namespace: string; name: string },
  projectTemplate: string,
  location: string,
): string {
  return endpointResourceName(endpointProject(projectTemplate, endpoint.namespace), location, endpoint.name);
}

/**
 * The URL to call, published in `status.url` as KServe publishes an InferenceService's: the
 * gateway's base URL and the Vertex AI REST path of the endpoint (append `:predict`, `:explain`
 * or `:rawPredict`).
 */
export function endpointUrl(gatewayBaseUrl: string, resourceName: string): string {
  return `${gatewayBaseUrl.replace(/\/+$/, '')}/v1/${resourceName}`;
}

/** Why a gateway base URL is not usable in `status.url`, or undefined when it is. */
export function gatewayUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL, for example http://endpoint-operator-gateway.endpoint-operator-system.svc';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  if (parsed.search !== '' || parsed.hash !== '') return 'must have no query or fragment';
  return undefined;
}

const BQ_SCHEME = 'bq://';
/** BigQuery project ids: 6–30 characters, lowercase letters, digits and hyphens, a letter first, no hyphen last. */
const BQ_PROJECT_ID = /^[a-z][-a-z0-9]{4,28}[a-z0-9]$/;
/** The domain of a domain-scoped project (`example.com:my-project`). */
const BQ_DOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;
/** BigQuery dataset ids: letters, digits and underscores, at most 1024 characters. */
const BQ_DATASET = /^[A-Za-z0-9_]{1,1024}$/;
/**
 * BigQuery table ids: Unicode letters, marks, numbers, connectors, dashes and spaces, at most 1024
 * UTF-8 bytes. A `.` cannot occur in one, which is what makes `project.dataset.table` unambiguous.
 */
const BQ_TABLE = /^[\p{L}\p{M}\p{N}\p{Pc}\p{Pd} ]+$/u;
const BQ_TABLE_MAX_BYTES = 1024;

/** The `^bq://` prefix as a pattern for the CRD; the rest of the URI is checked by `bigQueryUriProblem`. */
export const BQ_URI_PREFIX = /^bq:\/\//;

/**
 * The whole `bq://` URI as one RE2 pattern, for the CRD's CEL rule; `bigQueryUriProblem` says which part is
 * wrong. RE2 counts at most 1000 repetitions, hence the dataset's `{1,1000}` and `{0,24}`. The table's
 * 1024-byte limit is the validator's.
 */
/** No valid URI is longer: bq://, a 253-character domain and ':', a 30-character project, a dataset and a table of 1024 each and two dots. */
export const BQ_URI_MAX_LENGTH = 5 + 253 + 1 + 30 + 1 + 1024 + 1 + 1024;

export const BQ_URI = new RegExp(
  `^bq://(${BQ_DOMAIN.source.slice(1, -1)}:)?${BQ_PROJECT_ID.source.slice(1, -1)}(\\.[A-Za-z0-9_]{1,1000}[A-Za-z0-9_]{0,24}(\\.${BQ_TABLE.source.slice(1, -1)})?)?$`,
  'u',
);

/**
 * Why `uri` is not a `bq://project[.dataset[.table]]` URI, or undefined when it is one.
 * (Vertex AI's PredictRequestResponseLoggingConfig.bigquery_destination.output_uri.)
 */
export function bigQueryUriProblem(uri: string): string | undefined {
  if (!uri.startsWith(BQ_SCHEME)) return 'must start with bq:// (bq://project[.dataset[.table]])';
  const rest = uri.slice(BQ_SCHEME.length);
  const colon = rest.indexOf(':');
  const domain = colon >= 0 ? rest.slice(0, colon) : undefined;
  const afterDomain = colon >= 0 ? rest.slice(colon + 1) : rest;
  if (domain !== undefined && (domain.length > 253 || !BQ_DOMAIN.test(domain))) {
    return `the domain of a domain-scoped project must be a DNS domain such as example.com, not ${JSON.stringify(truncate(domain))}`;
  }
  const parts = afterDomain.split('.');
  const [project, dataset, ...tableParts] = parts;
  if (project === undefined || !BQ_PROJECT_ID.test(project)) {
    return 'the project must be a BigQuery project id: 6 to 30 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen (optionally prefixed by domain:)';
  }
  if (dataset !== undefined && !BQ_DATASET.test(dataset)) {
    return 'the dataset must be 1 to 1024 letters, digits and underscores';
  }
  if (tableParts.length > 1)
    return 'has too many parts: use bq://project, bq://project.dataset or bq://project.dataset.table';
  const table = tableParts[0];
  if (table !== undefined) {
    if (Buffer.byteLength(table, 'utf8') > BQ_TABLE_MAX_BYTES)
      return `the table id must be at most ${BQ_TABLE_MAX_BYTES} UTF-8 bytes`;
    if (!BQ_TABLE.test(table))
      return 'the table id must be non-empty and contain only letters, marks, numbers, connectors, dashes and spaces';
  }
  return undefined;
}

function truncate(s: string): string {
  return truncateText(s, 64);
}
