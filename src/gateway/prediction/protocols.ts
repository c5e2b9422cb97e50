/**
 * What the gateway sends to a model server and how it reads the answer, per protocol:
 *
 * | call        | KServeV1                                   | OpenInferenceV2                                  |
 * |-------------|--------------------------------------------|--------------------------------------------------|
 * | :predict    | POST /v1/models/{m}:predict {instances, parameters} → {predictions} | POST /v2/models/{m}/infer (tensors, see tensors.ts) |
 * | :explain    | POST /v1/models/{m}:explain → {explanations, predictions?}          | POST /v2/models/{m}/explain (the route KServe and MLRun V2 explainers serve) → outputs; BYTES output `explanation` holds one JSON explanation per instance |
 * | :rawPredict | POST /v1/models/{m}:predict, body unchanged | POST /v2/models/{m}/infer, body unchanged        |
 *
 * `Vertex` (a container the operator runs, Vertex AI's custom-container contract): `:predict` posts the
 * `{instances, parameters}` body to the container's predict route and reads `{predictions}` back, as KServeV1
 * does; `:rawPredict` posts its body unchanged to the same route; `:explain` has no route there (Vertex
 * computes explanations itself, from an explanation spec this resource does not have): FAILED_PRECONDITION.
 *
 * Pure: the HTTP exchange is upstream.ts's job. A model server answer that cannot be read is an
 * `UpstreamAnswerError` (a 502 naming the deployed model).
 */
import type { ContainerProtocol } from '../../api/prediction/v1/container-spec.js';
import { GoogleApiError } from '../google-errors.js';
import {
  instancesToInferRequest,
  isInferTensor,
  outputsToPredictions,
  TensorMappingError,
  type InferTensor,
} from './tensors.js';

export type PredictionMethod = 'predict' | 'explain' | 'rawPredict' | 'streamRawPredict';

/** The calls whose body passes to the model server unchanged (the second streams the model server's answer back). */
export function isRawMethod(method: PredictionMethod): method is 'rawPredict' | 'streamRawPredict' {
  return method === 'rawPredict' || method === 'streamRawPredict';
}

export class UpstreamAnswerError extends Error {}

/** The path on the model server (after any base path of a URL backend); `predictRoute` is a `Vertex` server's. */
export function upstreamPath(
  protocol: ContainerProtocol,
  modelName: string,
  method: PredictionMethod,
  predictRoute?: string,
): string {
  if (protocol === 'Vertex') {
    if (method === 'explain')
      throw new GoogleApiError(
        'FAILED_PRECONDITION',
        `Deployed model ${modelName} serves Vertex's custom-container protocol, which has no explain route: it cannot be explained.`,
      );
    return predictRoute ?? '/';
  }
  const m = encodeURIComponent(modelName);
  if (protocol === 'KServeV1') return method === 'explain' ? `/v1/models/${m}:explain` : `/v1/models/${m}:predict`;
  return method === 'explain' ? `/v2/models/${m}/explain` : `/v2/models/${m}/infer`;
}

/** The JSON body for :predict / :explain; throws TensorMappingError for instances V2 cannot carry. */
export function upstreamBody(protocol: ContainerProtocol, instances: readonly unknown[], parameters: unknown): unknown {
  if (protocol !== 'OpenInferenceV2') return parameters === undefined ? { instances } : { instances, parameters };
  return instancesToInferRequest(instances, parameters);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function outputsOf(answer: unknown): InferTensor[] {
  if (!isObject(answer) || !Array.isArray(answer.outputs) || !answer.outputs.every(isInferTensor)) {
    throw new UpstreamAnswerError('the model server answered without an "outputs" list of tensors');
  }
  return answer.outputs;
}

/** `predictions` out of a :predict answer. */
export function readPredictions(protocol: ContainerProtocol, answer: unknown, instanceCount: number): unknown[] {
  if (protocol !== 'OpenInferenceV2') {
    if (!isObject(answer) || !Array.isArray(answer.predictions))
      throw new UpstreamAnswerError('the model server answered without a "predictions" list');
    return answer.predictions;
  }
  try {
    return outputsToPredictions(outputsOf(answer), instanceCount);
  } catch (err) {
    if (err instanceof TensorMappingError) throw new UpstreamAnswerError(err.message);
    throw err;
  }
}

/** The V2 output carrying explanations (MLServer's alibi-explain runtime answers the same way). */
export const V2_EXPLANATION_OUTPUT = 'explanation';

/** `{explanations, predictions}` out of an :explain answer. */
export function readExplanations(
  protocol: ContainerProtocol,
  answer: unknown,
  instanceCount: number,
): { explanations: unknown[]; predictions?: unknown[] } {
  if (protocol !== 'OpenInferenceV2') {
    if (!isObject(answer) || !Array.isArray(answer.explanations))
      throw new UpstreamAnswerError('the model server answered :explain without an "explanations" list');
    return Array.isArray(answer.predictions)
      ? { explanations: answer.explanations, predictions: answer.predictions }
      : { explanations: answer.explanations };
  }
  const outputs = outputsOf(answer);
  const explanation = outputs.find((t) => t.name === V2_EXPLANATION_OUTPUT);
  if (explanation === undefined)
    throw new UpstreamAnswerError(
      `the model server answered /explain without an output named "${V2_EXPLANATION_OUTPUT}"`,
    );
  if (explanation.data.length !== instanceCount)
    throw new UpstreamAnswerError(
      `output "${V2_EXPLANATION_OUTPUT}" holds ${explanation.data.length} explanations for ${instanceCount} instances`,
    );
  const explanations = explanation.data.map((d, i) => {
    if (typeof d !== 'string') return d;
    try {
      return JSON.parse(d) as unknown;
    } catch {
      throw new UpstreamAnswerError(`output "${V2_EXPLANATION_OUTPUT}"[${i}] is not JSON`);
    }
  });
  const rest = outputs.filter((t) => t !== explanation);
  if (rest.length === 0) return { explanations };
  try {
    return { explanations, predictions: outputsToPredictions(rest, instanceCount) };
  } catch (err) {
    if (err instanceof TensorMappingError) throw new UpstreamAnswerError(err.message);
    throw err;
  }
}
