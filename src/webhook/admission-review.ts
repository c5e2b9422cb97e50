import { z } from 'zod';
import type { FieldError, FieldErrorType } from '../api/common/field-error.js';

/**
 * The parts of an admission.k8s.io/v1 AdmissionReview request the webhook reads
 * (https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request).
 * Objects stay `unknown`: each kind's validator decodes its own.
 */
const groupVersionKind = z.object({ group: z.string(), version: z.string().min(1), kind: z.string().min(1) });

const admissionRequest = z.object({
  uid: z.string().min(1),
  kind: groupVersionKind,
  resource: z.object({ group: z.string(), version: z.string(), resource: z.string() }).optional(),
  subResource: z.string().optional(),
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
  object: z.unknown().optional(),
  oldObject: z.unknown().optional(),
  dryRun: z.boolean().optional(),
});

const admissionReview = z.object({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  request: admissionRequest,
});

export type AdmissionRequest = z.infer<typeof admissionRequest>;

/** metav1.StatusCause: kubectl prints `<field>: <message>` for each one of a 422 Invalid status. */
export interface StatusCause {
  readonly type: FieldErrorType;
  readonly field: string;
  readonly message: string;
}

export interface AdmissionStatus {
  readonly code: number;
  readonly reason: string;
  readonly message: string;
  readonly details?: {
    readonly name: string;
    readonly group: string;
    readonly kind: string;
    readonly causes: readonly StatusCause[];
  };
}

export interface AdmissionResponse {
  readonly uid: string;
  readonly allowed: boolean;
  readonly status?: AdmissionStatus;
  readonly warnings?: readonly string[];
  /** Mutating webhooks only: a base64-encoded RFC 6902 JSON Patch. */
  readonly patchType?: 'JSONPatch';
  readonly patch?: string;
}

export interface AdmissionReviewResponse {
  readonly apiVersion: 'admission.k8s.io/v1';
  readonly kind: 'AdmissionReview';
  readonly response: AdmissionResponse;
}

/** A request body that is not an AdmissionReview v1 the webhook can answer (answered with HTTP 400). */
export class MalformedReviewError extends Error {
  override readonly name = 'MalformedReviewError';
}

/** Decodes a parsed JSON body; throws MalformedReviewError naming every wrong field. */
export function decodeAdmissionReview(body: unknown): AdmissionRequest {
  const result = admissionReview.safeParse(body);
  if (!result.success) throw new MalformedReviewError(`malformed AdmissionReview: ${describeIssues(result.error)}`);
  return result.data.request;
}

export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length === 0 ? '(body)' : i.path.map(String).join('.')}: ${i.message}`)
    .join('; ');
}

export function reviewResponse(response: AdmissionResponse): AdmissionReviewResponse {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

/** The error body after the field path, as Kubernetes' field.Error.ErrorBody() writes it. */
export function causeMessage(e: FieldError, formatted: string): string {
  const prefix = `${e.field}: `;
  return formatted.startsWith(prefix) ? formatted.slice(prefix.length) : formatted;
}
