/**
 * How a model server's failure reaches the caller: a non-2xx answer or a failed exchange becomes a
 * Google error naming the deployed model (id and DeployedModel) and the model server's own message.
 */
import { GoogleApiError } from './google-errors.js';
import type { ResolvedModel } from './routing-table.js';
import { answerBytes, type UpstreamFailure, type UpstreamResponse } from './upstream.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The message of a model server's error answer: its JSON `error`/`message`/`detail`, else the start of the body. */
function upstreamMessage(res: UpstreamResponse): string {
  const body = answerBytes(res);
  const text = body.subarray(0, 512).toString('utf8');
  try {
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    if (isObject(parsed)) {
      const m = parsed.error ?? parsed.message ?? parsed.detail;
      if (typeof m === 'string') return m;
      if (isObject(m) && typeof m.message === 'string') return m.message;
    }
  } catch {
    // not JSON: the text itself
  }
  return text;
}

/** A model server's non-2xx answer to :predict / :explain, as the gateway's error. */
export function answerError(model: ResolvedModel, res: UpstreamResponse): GoogleApiError {
  const prefix = `Deployed model ${model.id} (${model.deployedModelName}): the model server at ${res.target.origin} answered ${res.status}`;
  const detail = upstreamMessage(res);
  const message = `${prefix}${detail !== '' ? `: ${detail}` : ''}`;
  if (res.status === 400 || res.status === 422) return new GoogleApiError('INVALID_ARGUMENT', message, 400);
  if (res.status === 429) return new GoogleApiError('RESOURCE_EXHAUSTED', message);
  if (res.status === 503) return new GoogleApiError('UNAVAILABLE', message);
  if (res.status === 504) return new GoogleApiError('DEADLINE_EXCEEDED', message);
  return new GoogleApiError('INTERNAL', message, 502);
}

export function failureError(model: ResolvedModel, err: UpstreamFailure): GoogleApiError {
  const who = `Deployed model ${model.id} (${model.deployedModelName})`;
  switch (err.kind) {
    case 'connect':
      return new GoogleApiError(
        'UNAVAILABLE',
        `${who}: no model server endpoint accepted a connection: ${err.message}`,
      );
    case 'timeout':
      return new GoogleApiError('DEADLINE_EXCEEDED', `${who}: ${err.message}`);
    case 'cancelled':
      return new GoogleApiError('CANCELLED', `${who}: ${err.message}`);
    default:
      return new GoogleApiError('INTERNAL', `${who}: the model server connection failed: ${err.message}`, 502);
  }
}
