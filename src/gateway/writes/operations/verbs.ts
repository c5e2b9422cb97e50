/**
 * What each write's operation watches, registered per verb: a derive function from the objects as they are now
 * to `not done`, `done with a response` or `done with an error`, plus the typed Any messages Google's SDKs
 * unpack (the method's `*OperationMetadata` and its response type). ModelService and EndpointService add their
 * verbs; the Operations service (operations-service.ts) only looks them up. The generic derivations are here:
 * an object reconciled at the write's generation (kstatus: `observedGeneration`, then `Ready` or `Stalled`), and
 * an object gone (a delete).
 */
import { isRecord, type KubeObject, type ResourceRef } from '../../../api/common/kube-object.js';
import { ConditionType } from '../../../api/common/conditions.js';
import { GoogleApiError } from '../../google-errors.js';
import type { OperationRef } from './operation-name.js';

export type Derived =
  | { readonly done: false; readonly object?: KubeObject | undefined }
  | { readonly done: true; readonly response: Record<string, unknown>; readonly object?: KubeObject | undefined }
  | { readonly done: true; readonly error: GoogleApiError; readonly object?: KubeObject | undefined };

export interface DeriveContext {
  readonly ref: OperationRef;
  /** The namespace the operation's project maps to. */
  readonly namespace: string;
  /** An object of that namespace as the apiserver holds it now (undefined: not found). */
  readonly read: (resource: ResourceRef, name: string) => Promise<KubeObject | undefined>;
}

export interface OperationVerb {
  readonly verb: string;
  /** Full proto type name of the Operation's metadata, e.g. google.cloud.aiplatform.v1.UploadModelOperationMetadata. */
  readonly metadataType: string;
  /** Full proto type name of its response, e.g. google.cloud.aiplatform.v1.UploadModelResponse, google.protobuf.Empty. */
  readonly responseType: string;
  readonly derive: (ctx: DeriveContext) => Promise<Derived>;
}

/** The verbs a gateway's operations know, each added once by the service that writes them. */
export class OperationVerbs {
  private readonly byVerb = new Map<string, OperationVerb>();

  constructor(verbs: readonly OperationVerb[] = []) {
    for (const v of verbs) this.add(v);
  }

  add(verb: OperationVerb): this {
    if (this.byVerb.has(verb.verb)) throw new Error(`operation verb ${verb.verb} is registered twice`);
    this.byVerb.set(verb.verb, verb);
    return this;
  }

  get(verb: string): OperationVerb | undefined {
    return this.byVerb.get(verb);
  }
}

/** Stalled reasons that a retry inside the cluster may still fix: the operation fails UNAVAILABLE, not FAILED_PRECONDITION. */
const TRANSIENT = /Unavailable|Timeout|Throttl|Quota/i;

/** The failure a Stalled condition reports, with the code that fits (a pull failure names the image: its message does). */
export function stalledError(described: string, reason: string, message: string): GoogleApiError {
  const status = TRANSIENT.test(reason) ? 'UNAVAILABLE' : 'FAILED_PRECONDITION';
  return new GoogleApiError(status, `${described} stalled: ${reason}: ${message}`);
}

/**
 * kstatus for one write: `ready` once the object's status describes `generation` and says Ready=True; an error
 * once it says Stalled=True; not done before. A newer generation than the write's also ends it (the write was
 * observed, a later one is then the object's state).
 */
export function reconciledState(obj: KubeObject | undefined, generation: number, described: string): 'ready' | Derived {
  if (obj === undefined)
    return { done: true, error: new GoogleApiError('NOT_FOUND', `${described} no longer exists.`) };
  const status = isRecord(obj.status) ? obj.status : {};
  const observed = typeof status.observedGeneration === 'number' ? status.observedGeneration : 0;
  if (observed < generation) return { done: false, object: obj };
  const stalled = conditionOf(status, ConditionType.Stalled);
  if (stalled?.status === 'True')
    return { done: true, error: stalledError(described, stalled.reason, stalled.message), object: obj };
  return conditionOf(status, ConditionType.Ready)?.status === 'True' ? 'ready' : { done: false, object: obj };
}

/** A condition of a status as stored, read defensively. */
export function conditionOf(
  status: unknown,
  type: string,
): { status: string; reason: string; message: string } | undefined {
  const list = isRecord(status) && Array.isArray(status.conditions) ? (status.conditions as unknown[]) : [];
  const c = list.find((x) => isRecord(x) && x.type === type);
  if (!isRecord(c)) return undefined;
  return {
    status: typeof c.status === 'string' ? c.status : 'Unknown',
    reason: typeof c.reason === 'string' ? c.reason : '',
    message: typeof c.message === 'string' ? c.message : '',
  };
}

/** A delete: done (google.protobuf.Empty) once no object with the deleted uid exists. */
export function deletedState(obj: KubeObject | undefined, uid: string | undefined): Derived {
  if (obj === undefined || (uid !== undefined && obj.metadata.uid !== uid)) return { done: true, response: {} };
  return { done: false, object: obj };
}
