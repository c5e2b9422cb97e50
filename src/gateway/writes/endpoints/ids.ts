/**
 * Vertex AI's id rules for the EndpointService's writes: a user-given id is checked against the rule the
 * request's field documents (endpoint_service.proto, endpoint.proto), a missing one is generated in the shape
 * Vertex generates (endpoints: 19 digits; deployed models: at most 10 digits). An id is the object's
 * metadata.name (an endpoint) or its part of it (a DeployedModel created by the API is `<endpoint>-<id>`).
 * Pure: randomness is passed in.
 */
import { DEPLOYED_MODEL_ID } from '../../../api/prediction/v1/names.js';

/** Returns an integer in [0, max): `crypto.randomInt` in the gateway, a seeded source in tests. */
export type RandomInt = (max: number) => number;

/**
 * CreateEndpointRequest.endpoint_id: "If the first character is a letter, this value may be up to 63
 * characters, and valid characters are `[a-z0-9-]`. The last character must be a letter or number. If the first
 * character is a number, this value may be up to 9 characters, and valid characters are `[0-9]` with no leading
 * zeros." Both shapes are DNS-1123 labels, so the id is usable as metadata.name unchanged.
 */
const ENDPOINT_ID_WORD = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;
const ENDPOINT_ID_NUMBER = /^[1-9][0-9]{0,8}$/;

/** Why `id` is not a valid endpoint_id, or undefined when it is. */
export function endpointIdProblem(id: string): string | undefined {
  if (ENDPOINT_ID_WORD.test(id) || ENDPOINT_ID_NUMBER.test(id)) return undefined;
  if (/^[0-9]/.test(id)) return 'an endpoint id that starts with a digit must be 1 to 9 digits with no leading zero';
  return 'an endpoint id that starts with a letter must be at most 63 characters of lowercase letters, digits and hyphens, ending with a letter or digit; or give 1 to 9 digits with no leading zero';
}

/** DeployedModel.id: "1-10 characters, and valid characters are `/[0-9]/`". */
export function deployedModelIdProblem(id: string): string | undefined {
  return DEPLOYED_MODEL_ID.test(id) ? undefined : 'a deployed model id must be 1 to 10 digits';
}

function digits(count: number, random: RandomInt): string {
  let out = String(1 + random(9)); // no leading zero: Vertex's generated ids are numbers
  while (out.length < count) out += String(random(10));
  return out;
}

/**
 * A generated endpoint id: 19 digits, as Vertex generates them. A user-given numeric id has at most 9, so a
 * generated one never collides with one a user chose.
 */
export function generateEndpointId(random: RandomInt): string {
  return digits(19, random);
}

/** A generated deployed-model id (10 digits, as Vertex's) that `taken` does not hold. */
export function generateDeployedModelId(taken: ReadonlySet<string>, random: RandomInt): string {
  for (;;) {
    const id = digits(10, random);
    if (!taken.has(id)) return id;
  }
}

/** The metadata.name of the DeployedModel the API creates for deployed model `id` on `endpoint`. */
export function deployedModelObjectName(endpoint: string, id: string): string {
  return `${endpoint}-${id}`;
}
