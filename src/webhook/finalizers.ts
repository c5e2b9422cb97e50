/**
 * The mutating admission webhook: sets a kind's finalizer when an object is created.
 *
 * The controllers add the same finalizer when it is missing, so this is not needed for
 * correctness when the webhook is down or bypassed; it closes the window between creation and the
 * first reconcile (an object deleted in that window was never held), and it saves one write per
 * object: a finalizer PATCH costs the API server a read, a validation, an etcd write and a watch
 * event; a JSONPatch in the admission response costs it none of those (docs/benchmarks.md, B1).
 */
import type { KindDefinition } from '../api/common/kind.js';
import { isRecord } from '../api/common/text.js';
import type { AdmissionRequest, AdmissionResponse } from './admission-review.js';

export interface MutationOutcome {
  readonly response: AdmissionResponse;
  /** `patched`: the finalizer was added; `unchanged`: nothing to do. */
  readonly decision: 'patched' | 'unchanged';
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/** RFC 6902 operations. */
type JsonPatchOperation = { op: 'add'; path: string; value: unknown };

/** The kinds the mutating webhook sets a finalizer on (those whose definition names one). */
export function finalizedKinds(kinds: readonly KindDefinition[]): KindDefinition[] {
  return kinds.filter((k) => k.finalizer !== undefined);
}

/** The JSONPatch that adds `finalizer` to `object`, or undefined when it already has it. */
export function finalizerPatch(object: unknown, finalizer: string): JsonPatchOperation[] | undefined {
  const metadata = isRecord(object) && isRecord(object.metadata) ? object.metadata : undefined;
  if (metadata === undefined) return undefined; // not an object the API server would have admitted this far
  const current = metadata.finalizers;
  if (Array.isArray(current)) {
    if (current.includes(finalizer)) return undefined;
    return [{ op: 'add', path: '/metadata/finalizers/-', value: finalizer }];
  }
  return [{ op: 'add', path: '/metadata/finalizers', value: [finalizer] }];
}

/**
 * Answers one mutating review. Never denies: this webhook only adds, and validation is the
 * validating webhook's job (it runs after every mutation, on the final object).
 */
export function reviewFinalizers(request: AdmissionRequest, kinds: readonly KindDefinition[]): MutationOutcome {
  const { group, kind } = request.kind;
  const metadata = isRecord(request.object) && isRecord(request.object.metadata) ? request.object.metadata : {};
  const name =
    typeof metadata.name === 'string'
      ? metadata.name
      : typeof metadata.generateName === 'string'
        ? metadata.generateName
        : '';
  const base = { kind, namespace: request.namespace ?? '', name };
  const unchanged: MutationOutcome = { ...base, decision: 'unchanged', response: { uid: request.uid, allowed: true } };
  if (request.operation !== 'CREATE' || (request.subResource !== undefined && request.subResource !== ''))
    return unchanged;
  const finalizer = kinds.find((k) => k.group === group && k.kind === kind)?.finalizer;
  if (finalizer === undefined) return unchanged;
  const patch = finalizerPatch(request.object, finalizer);
  if (patch === undefined) return unchanged;
  return {
    ...base,
    decision: 'patched',
    response: {
      uid: request.uid,
      allowed: true,
      patchType: 'JSONPatch',
      patch: Buffer.from(JSON.stringify(patch), 'utf8').toString('base64'),
    },
  };
}
