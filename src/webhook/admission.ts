import { fieldErrors, formatFieldError, type FieldError } from '../api/common/field-error.js';
import type { KindDefinition, KindVersion, ValidationOptions } from '../api/common/kind.js';
import { isRecord } from '../api/common/text.js';
import { causeMessage, type AdmissionRequest, type AdmissionResponse, type StatusCause } from './admission-review.js';
import { unknownFieldWarnings } from './admission-unknown-fields.js';

const MAX_CAUSES = 100;

export type AdmissionDecision = 'allowed' | 'denied' | 'unserved';

/** What the server logs about one review (never the objects themselves). */
export interface AdmissionOutcome {
  readonly response: AdmissionResponse;
  readonly decision: AdmissionDecision;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly causes: number;
}

export interface AdmissionContext {
  readonly kinds: readonly KindDefinition[];
  readonly options: ValidationOptions;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function metadataOf(obj: unknown): Record<string, unknown> {
  return isRecord(obj) && isRecord(obj.metadata) ? obj.metadata : {};
}

/** The name to show in a denial: on CREATE with generateName the request carries no name yet. */
function displayName(request: AdmissionRequest): string {
  const meta = metadataOf(request.object);
  return str(request.name) ?? str(meta.name) ?? str(meta.generateName) ?? '';
}

function findServed(
  kinds: readonly KindDefinition[],
  group: string,
  version: string,
  kind: string,
): { def: KindDefinition; version: KindVersion } | undefined {
  const def = kinds.find((k) => k.group === group && k.kind === kind);
  const v = def?.versions.find((x) => x.name === version && x.served);
  return def && v ? { def, version: v } : undefined;
}

/**
 * Validates one admission request with the kind's own validator (the same pure function the
 * reconciler and `endpoint-operator validate` use) and builds the AdmissionReview response.
 * Never throws: a validator that throws is reported as an InternalError cause.
 */
export function reviewAdmission(request: AdmissionRequest, ctx: AdmissionContext): AdmissionOutcome {
  const { group, version, kind } = request.kind;
  const namespace = request.namespace ?? '';
  const name = displayName(request);
  const base = { kind, namespace, name };
  const allow = (warnings: readonly string[] = []): AdmissionOutcome => ({
    ...base,
    decision: 'allowed',
    causes: 0,
    response: { uid: request.uid, allowed: true, ...(warnings.length > 0 ? { warnings } : {}) },
  });

  // The configuration only registers CREATE and UPDATE; anything else has nothing to validate.
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  // Status writes are the operator's own output; the CRD schema still checks their shape.
  if (request.subResource !== undefined && request.subResource !== '') return allow();

  const served = findServed(ctx.kinds, group, version, kind);
  if (!served) {
    // A well-formed review for a kind we do not serve is a configuration error, not a bad manifest:
    // refuse it (allowed:false, 400) with a message that names what this webhook does serve, rather
    // than an HTTP error that the API server would report as "failed calling webhook".
    const gvk = `${group === '' ? '' : `${group}/`}${version}, Kind=${kind}`;
    const servedList = ctx.kinds.map((k) => `${k.kind}.${k.group}`).join(', ');
    return {
      ...base,
      decision: 'unserved',
      causes: 0,
      response: {
        uid: request.uid,
        allowed: false,
        status: {
          code: 400,
          reason: 'BadRequest',
          message: `endpoint-operator's admission webhook does not serve ${gvk}; it serves ${servedList || 'no kinds'}`,
        },
      },
    };
  }

  if (request.object === undefined) {
    return deny(
      request,
      base,
      served.def,
      [fieldErrors.required('', `AdmissionReview request.object is required for ${request.operation}`)],
      [],
    );
  }
  // A deleting object only waits for its finalizers to be removed; validating it again could
  // block that removal (and with it namespace or operator teardown) on rules it was already admitted under.
  if (request.operation === 'UPDATE' && str(metadataOf(request.oldObject).deletionTimestamp) !== undefined)
    return allow();

  const oldObject = request.operation === 'UPDATE' ? request.oldObject : undefined;
  let errors: FieldError[];
  let warnings: string[];
  try {
    ({ errors, warnings } = served.version.validate(request.object, oldObject, ctx.options));
  } catch (err) {
    errors = [fieldErrors.internal('', `validator failed: ${err instanceof Error ? err.message : String(err)}`)];
    warnings = [];
  }
  // Fields the version does not have were pruned before this review; the applied manifest still shows them.
  try {
    warnings = [...warnings, ...unknownFieldWarnings(request, ctx.kinds)];
  } catch {
    // A warning is advice: failing to compute one must not change the decision.
  }
  return errors.length === 0 ? allow(warnings) : deny(request, base, served.def, errors, warnings);
}

function deny(
  request: AdmissionRequest,
  base: { kind: string; namespace: string; name: string },
  def: KindDefinition,
  errors: readonly FieldError[],
  warnings: readonly string[],
): AdmissionOutcome {
  // A pathological object (thousands of bad keys) must not produce a multi-megabyte denial that
  // the API server relays to the client and to its audit log: report the first MAX_CAUSES.
  const shown = errors.slice(0, MAX_CAUSES);
  const causes: StatusCause[] = shown.map((e) => ({
    type: e.type,
    field: e.field,
    message: causeMessage(e, formatFieldError(e)),
  }));
  if (errors.length > shown.length)
    causes.push({ type: 'FieldValueTooMany', field: '', message: `and ${errors.length - shown.length} more errors` });
  const lines = causes.map((c) => (c.field === '' ? c.message : `${c.field}: ${c.message}`));
  // kubectl recognises a 422 Invalid with details and prints `The <Kind> "<name>" is invalid:` and
  // one `<field>: <message>` line per cause (seen with kubectl 1.32 against kube-apiserver 1.20);
  // other clients print status.message, which the API server prefixes with `admission webhook
  // "..." denied the request:`. Both carry every path, value and rule.
  const message = `${def.kind} "${base.name}" is invalid: ${lines.join('; ')}`;
  return {
    ...base,
    decision: 'denied',
    causes: errors.length,
    response: {
      uid: request.uid,
      allowed: false,
      status: {
        code: 422,
        reason: 'Invalid',
        message,
        details: { name: base.name, group: def.group, kind: def.kind, causes },
      },
      ...(warnings.length > 0 ? { warnings } : {}),
    },
  };
}
