/**
 * A review whose body nests deeper than the JSON limit (json-guard.ts) is still a review the
 * kube-apiserver waits for: answering it with a bare 400 would surface as "failed calling webhook".
 * So the envelope is read (V8's JSON.parse is iterative; nothing here walks the object) and the
 * review is answered as a refusal naming the limit, which the apiserver relays to the client as is.
 * Nothing recursive (decoding, validation, conversion) runs on the object.
 */
import { reviewResponse, type AdmissionReviewResponse } from './admission-review.js';
import { conversionReviewResponse, type ConversionReviewResponse } from './conversion.js';

export class TooDeepBody extends Error {
  constructor(
    readonly text: string,
    message: string,
  ) {
    super(message);
  }
}

/** The refusal of a too-deep review at `kind` (`admission` or `conversion`), or undefined when the body is no review with a uid. */
export function tooDeepAnswer(
  kind: 'admission' | 'conversion',
  body: TooDeepBody,
): AdmissionReviewResponse | ConversionReviewResponse | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.text);
  } catch {
    return undefined;
  }
  const request = typeof parsed === 'object' && parsed !== null ? (parsed as { request?: unknown }).request : undefined;
  const uid = typeof request === 'object' && request !== null ? (request as { uid?: unknown }).uid : undefined;
  if (typeof uid !== 'string') return undefined;
  if (kind === 'conversion')
    return conversionReviewResponse({
      uid,
      result: { status: 'Failure', message: body.message },
      convertedObjects: [],
    });
  return reviewResponse({ uid, allowed: false, status: { code: 400, reason: 'BadRequest', message: body.message } });
}
