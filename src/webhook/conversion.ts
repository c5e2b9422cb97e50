import { z } from 'zod';
import { isRecord } from '../api/common/text.js';
import { describeIssues, MalformedReviewError } from './admission-review.js';
import { converterKey, type ConverterTable } from './converters.js';

/**
 * apiextensions.k8s.io/v1 ConversionReview
 * (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#webhook-request-and-response).
 */
const conversionReview = z.object({
  apiVersion: z.literal('apiextensions.k8s.io/v1'),
  kind: z.literal('ConversionReview'),
  request: z.object({
    uid: z.string().min(1),
    desiredAPIVersion: z.string().regex(/^[^/]+\/[^/]+$/, 'must be <group>/<version>'),
    objects: z.array(z.unknown()),
  }),
});

export type ConversionRequest = z.infer<typeof conversionReview>['request'];

export interface ConversionResponse {
  readonly uid: string;
  readonly result: { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
  readonly convertedObjects: readonly Record<string, unknown>[];
}

export interface ConversionReviewResponse {
  readonly apiVersion: 'apiextensions.k8s.io/v1';
  readonly kind: 'ConversionReview';
  readonly response: ConversionResponse;
}

export function decodeConversionReview(body: unknown): ConversionRequest {
  const result = conversionReview.safeParse(body);
  if (!result.success) throw new MalformedReviewError(`malformed ConversionReview: ${describeIssues(result.error)}`);
  return result.data.request;
}

export interface ConversionOutcome {
  readonly response: ConversionResponse;
  /** `<group>/<Kind>` of the first object, for the log line. */
  readonly kind: string;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Converts every object of the request, or none: the API server expects either all objects
 * converted in order or a Failure (which it reports to the client as a 500 for that read/write).
 */
export function reviewConversion(request: ConversionRequest, table: ConverterTable): ConversionOutcome {
  const converted: Record<string, unknown>[] = [];
  let firstKind = '';
  const fail = (message: string): ConversionOutcome => ({
    kind: firstKind,
    response: { uid: request.uid, result: { status: 'Failure', message }, convertedObjects: [] },
  });
  for (const [i, obj] of request.objects.entries()) {
    if (!isRecord(obj) || typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') {
      return fail(`objects[${i}]: must be an object with string apiVersion and kind`);
    }
    const key = converterKey(groupOf(obj.apiVersion), obj.kind);
    if (i === 0) firstKind = key;
    if (groupOf(obj.apiVersion) !== groupOf(request.desiredAPIVersion)) {
      return fail(
        `objects[${i}]: cannot convert ${obj.apiVersion} to ${request.desiredAPIVersion}: conversion never changes the API group`,
      );
    }
    const convert = table[key];
    if (!convert)
      return fail(
        `objects[${i}]: no conversion is defined for ${key}; this webhook converts ${Object.keys(table).join(', ') || 'nothing'}`,
      );
    let result;
    try {
      result = convert(obj, request.desiredAPIVersion);
    } catch (err) {
      result = { ok: false as const, message: `converter failed: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (!result.ok) return fail(`objects[${i}] (${obj.kind} ${describeName(obj)}): ${result.message}`);
    converted.push(result.object);
  }
  return {
    kind: firstKind,
    response: { uid: request.uid, result: { status: 'Success' }, convertedObjects: converted },
  };
}

function describeName(obj: Record<string, unknown>): string {
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  const ns = typeof meta.namespace === 'string' ? `${meta.namespace}/` : '';
  return `${ns}${typeof meta.name === 'string' ? meta.name : '<unnamed>'}`;
}

export function conversionReviewResponse(response: ConversionResponse): ConversionReviewResponse {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response };
}
