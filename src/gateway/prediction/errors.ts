/**
 * How a model server's failure reaches the caller: a non-2xx answer or a failed exchange becomes a
 * Google error naming the deployed model (id and DeployedModel) and the model server's own message.
 */
import { GoogleApiError } from '../google-errors.js';
import type { ResolvedModel } from '../routing-table.js';
import { answerBytes, type UpstreamFailure, type UpstreamResponse } from '../upstream.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** How much of a model server's own message an error quotes. */
export const QUOTE_LIMIT_BYTES = 512;

const TRACEBACK = 'Traceback (most recent call last):';

/** The first `limit` bytes of `text` (whole characters), marked with an ellipsis when cut. */
function bounded(text: string, limit = QUOTE_LIMIT_BYTES): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  // Decoding a cut multi-byte character gives U+FFFD: drop it rather than quote a broken character.
  return `${bytes
    .subarray(0, limit)
    .toString('utf8')
    .replace(/\uFFFD$/, '')}…`;
}

/**
 * The cause of a Python traceback (a model server that let an exception through answers with one, as MLServer
 * does with a 500): the exception line(s) after the last frame. A frame is `  File "…", line n, in f` and its
 * indented source and `^^^` lines; whatever follows the last one, unindented, is `ValueError: X has 2 features…`
 * (and a multi-line message's continuation). Undefined when `text` is no traceback.
 */
export function tracebackCause(text: string): string | undefined {
  const start = text.lastIndexOf(TRACEBACK);
  if (start < 0) return undefined;
  const lines = text.slice(start).split(/\r?\n/);
  let i = lines.findLastIndex((l) => /^\s+File "/.test(l));
  if (i < 0) i = 0;
  for (i += 1; i < lines.length && /^\s/.test(lines[i] ?? ''); i++);
  const cause = lines
    .slice(i)
    .map((l) => l.trimEnd())
    .filter((l) => l !== '');
  return cause.length > 0 ? cause.join('\n') : undefined;
}

/**
 * The message of a model server's error answer: its JSON `error`/`message`/`detail`; else, for a Python
 * traceback, its cause (the last lines: the first bytes are only `Traceback (most recent call last):` and
 * frames), bounded; else the start of the body.
 */
function upstreamMessage(res: UpstreamResponse): string {
  const text = answerBytes(res).toString('utf8');
  try {
    const parsed = JSON.parse(text) as unknown;
    if (isObject(parsed)) {
      const m = parsed.error ?? parsed.message ?? parsed.detail;
      const message = typeof m === 'string' ? m : isObject(m) && typeof m.message === 'string' ? m.message : undefined;
      if (message !== undefined) {
        const cause = tracebackCause(message);
        return cause !== undefined ? bounded(cause) : message;
      }
    }
  } catch {
    // not JSON: the text itself
  }
  return bounded(tracebackCause(text) ?? text);
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
    case 'reset':
      return new GoogleApiError(
        'UNAVAILABLE',
        `${who}: the model server connection failed after the call was sent, before an answer; not retried, as a prediction call may not be repeated safely: ${err.message}`,
      );
    case 'timeout':
      return new GoogleApiError('DEADLINE_EXCEEDED', `${who}: ${err.message}`);
    case 'cancelled':
      return new GoogleApiError('CANCELLED', `${who}: ${err.message}`);
    default:
      return new GoogleApiError('INTERNAL', `${who}: the model server connection failed: ${err.message}`, 502);
  }
}
