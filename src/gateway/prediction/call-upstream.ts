/**
 * Stage 7, call the model server: over the undici keep-alive pools of upstream.ts (round robin over
 * ready targets, outliers skipped, one retry of a call of which nothing was written, one deadline), timed
 * and counted; a failed exchange becomes the Google error that names the deployed model.
 */
import type { Caller } from '../caller.js';
import { gatewayUpstreamDuration, gatewayUpstreamResets, gatewayUpstreamRetries } from '../metrics.js';
import { failureError } from './errors.js';
import { upstreamPath, type PredictionMethod } from './protocols.js';
import type { ResolvedEndpoint } from '../routing-table.js';
import type { UpstreamTrace } from '../tracing.js';
import { UpstreamFailure, type UpstreamClient, type UpstreamResponse, type UpstreamStream } from '../upstream.js';
import type { EncodedRequest } from './encode.js';

export interface UpstreamCall {
  readonly endpoint: ResolvedEndpoint;
  readonly method: PredictionMethod;
  readonly request: EncodedRequest;
  /** Sent with the request: the content type is the encoded body's; trace context is added here or per attempt. */
  readonly headers: Readonly<Record<string, string>>;
  readonly trace: UpstreamTrace | undefined;
}

/**
 * `caller`: when it goes away, the exchange ends at once. `:streamRawPredict`'s answer is
 * streamed (its duration counts to the answer's start); every other answer is read whole.
 */
export async function callUpstream(
  upstream: Pick<UpstreamClient, 'call' | 'stream'>,
  call: UpstreamCall,
  caller: Caller,
): Promise<UpstreamResponse | UpstreamStream> {
  const { serving } = call.request;
  const { model } = serving;
  const started = performance.now();
  try {
    const request = {
      path: upstreamPath(serving.protocol, serving.modelName, call.method, serving.predictRoute),
      body: call.request.body,
      headers: { ...call.headers, 'content-type': call.request.contentType },
      trace: call.trace,
    };
    const key = `${model.namespace}/${model.deployedModelName}`;
    const res =
      call.method === 'streamRawPredict'
        ? await upstream.stream(key, serving.targets, request, caller)
        : await upstream.call(key, serving.targets, request, caller);
    if (res.retried) gatewayUpstreamRetries.inc();
    return res;
  } catch (err) {
    if (err instanceof UpstreamFailure) {
      if (err.kind === 'reset') gatewayUpstreamResets.inc();
      throw failureError(model, err);
    }
    throw err;
  } finally {
    gatewayUpstreamDuration.observe(
      { namespace: call.endpoint.namespace, endpoint: call.endpoint.name, deployed_model: model.id },
      (performance.now() - started) / 1000,
    );
  }
}
