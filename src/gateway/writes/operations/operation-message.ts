/**
 * A google.longrunning.Operation as proto3 JSON: `metadata` the method's `*OperationMetadata` and `response` the
 * method's response, each an Any with its `@type`, exactly the types Google's SDKs unpack
 * (`type.googleapis.com/google.cloud.aiplatform.v1.UploadModelResponse`, ...); `error` a google.rpc.Status.
 */
import type { KubeObject } from '../../../api/common/kube-object.js';
import { grpcCode } from '../../grpc/status.js';
import { appliedAt } from '../owned-fields.js';
import type { OperationRef } from './operation-name.js';
import type { Derived, OperationVerb } from './verbs.js';

const TYPE_URL_PREFIX = 'type.googleapis.com/';
export const GENERIC_METADATA = 'google.cloud.aiplatform.v1.GenericOperationMetadata';

/** An Any's JSON: a well-known type (google.protobuf.*) carries its JSON form in `value` (proto3 JSON mapping). */
export function anyJson(typeName: string, value: Record<string, unknown>): Record<string, unknown> {
  const type = `${TYPE_URL_PREFIX}${typeName}`;
  return typeName.startsWith('google.protobuf.') ? { '@type': type, value } : { '@type': type, ...value };
}

export interface OperationJson {
  readonly name: string;
  readonly metadata: Record<string, unknown>;
  readonly done: boolean;
  readonly response?: Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/** createTime: when the writer's manager applied to the object (managedFields); updateTime: now. */
export function operationJson(
  name: string,
  ref: OperationRef,
  verb: OperationVerb,
  derived: Derived,
  now: Date,
): OperationJson {
  const object: KubeObject | undefined = derived.object;
  const created =
    (ref.manager !== undefined && object !== undefined ? appliedAt(object, ref.manager) : undefined) ??
    object?.metadata.creationTimestamp;
  const genericMetadata = { ...(created !== undefined ? { createTime: created } : {}), updateTime: now.toISOString() };
  // A method without metadata of its own (UpdateModel, MergeVersionAliases) carries GenericOperationMetadata itself.
  const generic = verb.metadataType === GENERIC_METADATA;
  const base = { name, metadata: anyJson(verb.metadataType, generic ? genericMetadata : { genericMetadata }) };
  if (!derived.done) return { ...base, done: false };
  if ('error' in derived)
    return { ...base, done: true, error: { code: grpcCode(derived.error.status), message: derived.error.message } };
  return { ...base, done: true, response: anyJson(verb.responseType, derived.response) };
}
