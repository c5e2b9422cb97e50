/**
 * Stage 1, admit: what the path names, read before anything else is done. A call must name one of
 * Vertex's three methods on an endpoint, and ask for JSON if it asks for a format at all (Google's
 * system parameters). Nothing is looked up here, so a refusal cannot tell whether the endpoint exists.
 */
import { userTextInMessage } from '../../api/common/text.js';
import type { CallTarget } from '../auth/attributes.js';
import { predictionTarget } from '../auth/targets.js';
import { checkSystemParameters, GoogleApiError } from '../google-errors.js';
import type { PredictionMethod } from './protocols.js';

/** `/v1/projects/{p}/locations/{l}/endpoints/{id}:{method}[?query]`: the paths the pipeline serves (any method name). */
const PREDICTION_PATH = /^\/v1\/projects\/([^/?#]+)\/locations\/([^/?#]+)\/endpoints\/([^/?#]+)(?:\?(.*))?$/;

const METHODS: ReadonlySet<string> = new Set<PredictionMethod>([
  'predict',
  'explain',
  'rawPredict',
  'streamRawPredict',
]);

/**
 * EndpointService's writes that share the prediction calls' path shape (`POST /v1/{endpoint}:deployModel`): the
 * write API's routes serve them (../writes/endpoints/deploy-methods.ts), not the pipeline.
 */
const ENDPOINT_WRITE_METHODS: ReadonlySet<string> = new Set(['deployModel', 'undeployModel', 'mutateDeployedModel']);

/** Whether a request is the pipeline's (every other one is fastify's). */
export function isPredictionRequest(method: string | undefined, url: string | undefined): boolean {
  if (method !== 'POST') return false;
  const m = PREDICTION_PATH.exec(url ?? '');
  if (m === null) return false;
  const segment = m[3] ?? '';
  return !ENDPOINT_WRITE_METHODS.has(segment.slice(segment.lastIndexOf(':') + 1));
}

/** A call the path admits. */
export interface AdmittedCall {
  readonly method: PredictionMethod;
  /** `projects/{p}/locations/{l}/endpoints/{id}`, as the endpoint's status.name spells it. */
  readonly resourceName: string;
  /** The object the path names, for authorisation; undefined when its project does not fit the --project template. */
  readonly target: CallTarget | undefined;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The system parameters of a query string, in the shape checkSystemParameters reads. */
function queryOf(query: string | undefined): Record<string, string[]> | undefined {
  if (query === undefined || query === '') return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(query)) (out[k] ??= []).push(v);
  return out;
}

/** What a prediction path says, before it is checked. */
export interface CallPath {
  /** The method as written after the last `:` of the endpoint segment ('' when there is none). */
  readonly method: string;
  readonly resourceName: string;
  readonly target: CallTarget | undefined;
  readonly query: string | undefined;
  readonly hasMethod: boolean;
}

/** Reads a path isPredictionRequest matched. `readNamespace` reads the namespace out of a project (auth/targets.ts). */
export function readCallPath(url: string, readNamespace: (project: string) => string | undefined): CallPath {
  const match = PREDICTION_PATH.exec(url);
  if (match === null) throw new Error(`not a prediction path: ${url}`);
  const [, project = '', location = '', last = '', query] = match;
  const named = decode(last);
  const colon = named.lastIndexOf(':');
  const endpointId = colon < 0 ? named : named.slice(0, colon);
  return {
    method: colon < 0 ? '' : named.slice(colon + 1),
    resourceName: `projects/${decode(project)}/locations/${decode(location)}/endpoints/${endpointId}`,
    target: predictionTarget(readNamespace, decode(project), endpointId),
    query,
    hasMethod: colon >= 0,
  };
}

export function isPredictionMethod(method: string): method is PredictionMethod {
  return METHODS.has(method);
}

/** The call a path names, or the refusal: 400 for a format other than JSON, then 404 for a method Vertex does not have. */
export function admitCall(path: CallPath): AdmittedCall {
  const systemError = checkSystemParameters(queryOf(path.query));
  if (systemError !== undefined) throw systemError;
  if (!isPredictionMethod(path.method)) {
    throw new GoogleApiError(
      'NOT_FOUND',
      `Method ${path.hasMethod ? JSON.stringify(userTextInMessage(path.method)) : '(none)'} not found for ${userTextInMessage(path.resourceName)}: the calls are :predict, :explain and :rawPredict, and :streamRawPredict to stream :rawPredict's answer.`,
    );
  }
  return { method: path.method, resourceName: path.resourceName, target: path.target };
}

/** The refusal of an endpoint the caller may not see or that does not exist: the same answer for both. */
export function endpointNotFound(resourceName: string): GoogleApiError {
  return new GoogleApiError('NOT_FOUND', `Endpoint ${userTextInMessage(resourceName)} not found.`);
}
