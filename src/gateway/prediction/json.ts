/**
 * The JSON work of a :predict / :explain call, free of I/O so that it runs the same on the event loop
 * (small bodies) and in a worker thread (large ones, json-worker-pool.ts): reading the caller's request
 * as Vertex checks it, building the model server's request for its protocol, and turning the model
 * server's answer into Vertex's. Every refusal is the GoogleApiError the caller gets.
 */
import type { ContainerProtocol } from '../../api/prediction/v1/container-spec.js';
import { parseGuardedJson } from '../../http/json-guard.js';
import { GoogleApiError } from '../google-errors.js';
import { readExplanations, readPredictions, upstreamBody, UpstreamAnswerError } from './protocols.js';
import { TensorMappingError } from './tensors.js';

export interface JsonRequest {
  readonly instances: unknown[];
  readonly parameters: unknown;
  readonly deployedModelId: unknown;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON request of :predict / :explain, checked as Vertex checks it. */
export function parseJsonRequest(body: Buffer): JsonRequest {
  let parsed: unknown;
  try {
    parsed = parseGuardedJson(body);
  } catch (err) {
    throw new GoogleApiError('INVALID_ARGUMENT', `Invalid JSON payload received. ${(err as Error).message}`);
  }
  return readJsonRequest(parsed);
}

/** A request already read as JSON values (REST's parsed body, gRPC's decoded message), checked as Vertex checks it. */
export function readJsonRequest(parsed: unknown): JsonRequest {
  if (!isObject(parsed))
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      'Invalid JSON payload received. The request must be a JSON object with an "instances" list.',
    );
  if (!('instances' in parsed))
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      'instances is required: a list of one or more instances to predict on.',
    );
  if (!Array.isArray(parsed.instances))
    throw new GoogleApiError(
      'INVALID_ARGUMENT',
      `instances must be a list, got ${parsed.instances === null ? 'null' : typeof parsed.instances}.`,
    );
  if (parsed.instances.length === 0)
    throw new GoogleApiError('INVALID_ARGUMENT', 'instances must hold at least one instance.');
  return { instances: parsed.instances, parameters: parsed.parameters, deployedModelId: parsed.deployedModelId };
}

/** The model server's request body for `protocol`; a V2 tensor mapping failure is the caller's 400 naming the deployed model. */
export function serializeUpstreamRequest(protocol: ContainerProtocol, json: JsonRequest, modelId: string): string {
  try {
    return JSON.stringify(upstreamBody(protocol, json.instances, json.parameters));
  } catch (err) {
    if (err instanceof TensorMappingError)
      throw new GoogleApiError(
        'INVALID_ARGUMENT',
        `instances cannot be sent to deployed model ${modelId} as Open Inference V2 tensors: ${err.message}.`,
      );
    throw err;
  }
}

/** What the Vertex answer says of the deployed model that served it (the 502s name it and the server). */
export interface ServingModel {
  readonly id: string;
  readonly deployedModelName: string;
  readonly model: string;
  readonly modelDisplayName: string;
  readonly modelVersionId: string | undefined;
  /** The model server's origin that answered. */
  readonly origin: string;
}

/** Vertex's answer to :predict or :explain, as JSON values (REST writes it as text, gRPC as the response message). */
export type VertexAnswer =
  | {
      readonly predictions: unknown[];
      readonly deployedModelId: string;
      readonly model: string;
      readonly modelDisplayName: string;
      readonly modelVersionId?: string;
    }
  | { readonly explanations: unknown[]; readonly deployedModelId: string; readonly predictions?: unknown[] };

/** The Vertex answer (JSON text) to a model server's 2xx answer; a 502 when that answer cannot be read. */
export function vertexAnswer(
  method: 'predict' | 'explain',
  protocol: ContainerProtocol,
  answerBody: Buffer,
  instanceCount: number,
  model: ServingModel,
): string {
  return JSON.stringify(vertexAnswerValue(method, protocol, answerBody, instanceCount, model));
}

/** The Vertex answer to a model server's 2xx answer, as JSON values; a 502 when that answer cannot be read. */
export function vertexAnswerValue(
  method: 'predict' | 'explain',
  protocol: ContainerProtocol,
  answerBody: Buffer,
  instanceCount: number,
  model: ServingModel,
): VertexAnswer {
  let answer: unknown;
  try {
    answer = JSON.parse(answerBody.toString('utf8'));
  } catch {
    throw new GoogleApiError(
      'INTERNAL',
      `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${model.origin} answered with invalid JSON.`,
      502,
    );
  }
  try {
    if (method === 'predict') {
      const predictions = readPredictions(protocol, answer, instanceCount);
      const { id: deployedModelId, modelDisplayName, modelVersionId } = model;
      return modelVersionId === undefined
        ? { predictions, deployedModelId, model: model.model, modelDisplayName }
        : { predictions, deployedModelId, model: model.model, modelDisplayName, modelVersionId };
    }
    const { explanations, predictions } = readExplanations(protocol, answer, instanceCount);
    return predictions === undefined
      ? { explanations, deployedModelId: model.id }
      : { explanations, deployedModelId: model.id, predictions };
  } catch (err) {
    if (err instanceof UpstreamAnswerError)
      throw new GoogleApiError(
        'INTERNAL',
        `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${model.origin} answered badly: ${err.message}.`,
        502,
      );
    throw err;
  }
}
