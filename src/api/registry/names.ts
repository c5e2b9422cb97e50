import { PROJECT_NUMBER_PATTERN, projectNumberDigitsProblem } from '../common/project-number.js';
import { truncateText } from '../common/text.js';

/**
 * Service Directory resource names, as `spec.name` carries them:
 * `projects/{project}/locations/{location}/namespaces/{namespace}/services/{service}[/endpoints/{endpoint}]`,
 * and the VPC network name of v1beta1 endpoints.
 *
 * Segment rules (Service Directory's, written as RE2-compatible patterns so the CRD can carry them):
 * - namespace, service and endpoint ids, and the location: RFC 1035 labels, 1-63 characters, a lowercase
 *   letter first, then lowercase letters, digits or '-', not ending in '-';
 * - the project: a project ID (6-30 characters, the same alphabet, a letter first, not ending in '-') or a
 *   project number (decimal, no leading zero, at most 19 digits: an int64).
 */

const RFC1035_ID = '[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?';
const PROJECT_ID = '[a-z][-a-z0-9]{4,28}[a-z0-9]';
const PROJECT_NUMBER = PROJECT_NUMBER_PATTERN;

const SERVICE_COLLECTIONS = ['projects', 'locations', 'namespaces', 'services'] as const;
const ENDPOINT_COLLECTIONS = [...SERVICE_COLLECTIONS, 'endpoints'] as const;

function namePattern(collections: readonly string[]): string {
  return collections.map((c, i) => `${c}/${i === 0 ? `(?:${PROJECT_ID}|${PROJECT_NUMBER})` : RFC1035_ID}`).join('/');
}

export const SERVICE_NAME_PATTERN = new RegExp(`^${namePattern(SERVICE_COLLECTIONS)}$`);
export const ENDPOINT_NAME_PATTERN = new RegExp(`^${namePattern(ENDPOINT_COLLECTIONS)}$`);
/** `projects/{project number}/locations/global/networks/{network}`: Service Directory refuses a project ID here. */
export const NETWORK_NAME_PATTERN = new RegExp(`^projects/${PROJECT_NUMBER}/locations/global/networks/${RFC1035_ID}$`);

function maxNameLength(collections: readonly string[]): number {
  return collections.reduce((n, c, i) => n + c.length + 2 + (i === 0 ? 30 : 63), -1);
}

export const MAX_SERVICE_NAME_LENGTH = maxNameLength(SERVICE_COLLECTIONS);
export const MAX_ENDPOINT_NAME_LENGTH = maxNameLength(ENDPOINT_COLLECTIONS);
export const MAX_NETWORK_NAME_LENGTH = 'projects//locations/global/networks/'.length + 19 + 63;

export const SERVICE_NAME_FORMAT = 'projects/{project}/locations/{location}/namespaces/{namespace}/services/{service}';
export const ENDPOINT_NAME_FORMAT = `${SERVICE_NAME_FORMAT}/endpoints/{endpoint}`;
export const NETWORK_NAME_FORMAT = 'projects/{project number}/locations/global/networks/{network}';

const ID_RULE = "1-63 characters: a lowercase letter, then lowercase letters, digits or '-', not ending in '-'";
const PROJECT_RULE =
  "a project ID (6-30 characters: a lowercase letter, then lowercase letters, digits or '-', not ending in '-') or a project number";

const ID = new RegExp(`^${RFC1035_ID}$`);
const PROJECT = new RegExp(`^(?:${PROJECT_ID}|${PROJECT_NUMBER})$`);
const NUMBER = new RegExp(`^${PROJECT_NUMBER}$`);

/** Why `name` does not match `collection/id/collection/id/...`, naming the first wrong segment, or undefined. */
function segmentsProblem(name: string, collections: readonly string[], format: string): string | undefined {
  const parts = name.split('/');
  if (parts.length !== collections.length * 2)
    return `must have the form ${format} (found ${parts.length} '/'-separated segments, expected ${collections.length * 2})`;
  for (const [i, collection] of collections.entries()) {
    const label = parts[2 * i] ?? '';
    const id = parts[2 * i + 1] ?? '';
    if (label !== collection)
      return `must have the form ${format}: segment ${2 * i + 1} must be ${JSON.stringify(collection)}, not ${quoted(label)}`;
    if (i === 0 ? !PROJECT.test(id) : !ID.test(id)) {
      return `must have the form ${format}: the ${collection} id ${quoted(id)} must be ${i === 0 ? PROJECT_RULE : ID_RULE}`;
    }
  }
  return undefined;
}

/** Why `name` is not a valid RegistryService `spec.name`, or undefined when it is. */
export function serviceNameProblem(name: string): string | undefined {
  return segmentsProblem(name, SERVICE_COLLECTIONS, SERVICE_NAME_FORMAT);
}

/** Why `name` is not a valid RegistryEndpoint `spec.name`, or undefined when it is. */
export function endpointNameProblem(name: string): string | undefined {
  return segmentsProblem(name, ENDPOINT_COLLECTIONS, ENDPOINT_NAME_FORMAT);
}

/** Why `network` is not a valid v1beta1 `spec.network`, or undefined when it is. Existence is not checked. */
export function networkNameProblem(network: string): string | undefined {
  const parts = network.split('/');
  if (parts.length === 6 && parts[0] === 'projects' && parts[2] === 'locations' && parts[4] === 'networks') {
    const project = parts[1] ?? '';
    if (!NUMBER.test(project)) {
      return PROJECT.test(project)
        ? `must name the project by its number, not its ID ${quoted(project)} (${NETWORK_NAME_FORMAT}; see \`gcloud projects describe ${project} --format='value(projectNumber)'\`)`
        : `must have the form ${NETWORK_NAME_FORMAT}: ${projectNumberDigitsProblem(project) ?? `${quoted(project)} is not a project number`}`;
    }
    if (parts[3] !== 'global')
      return `must have the form ${NETWORK_NAME_FORMAT}: VPC networks are global, so the location must be "global", not ${quoted(parts[3])}`;
    if (!ID.test(parts[5] ?? ''))
      return `must have the form ${NETWORK_NAME_FORMAT}: the network name ${quoted(parts[5])} must be ${ID_RULE}`;
    return undefined;
  }
  return `must have the form ${NETWORK_NAME_FORMAT}`;
}

/**
 * The `spec.name` of the RegistryService an endpoint belongs to (its name without the trailing
 * `/endpoints/{endpoint}`), or undefined when `endpointName` is not a valid endpoint name.
 */
export function parentServiceName(endpointName: string): string | undefined {
  if (endpointNameProblem(endpointName) !== undefined) return undefined;
  return endpointName.slice(0, endpointName.lastIndexOf('/endpoints/'));
}

/** A piece of a name in a message: quoted, and cut (between code points) when a name is huge. */
function quoted(s: string | undefined): string {
  return JSON.stringify(truncateText(s ?? '', 64));
}
