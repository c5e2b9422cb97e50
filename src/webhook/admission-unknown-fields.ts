import type { KindDefinition } from '../api/common/kind.js';
import { isRecord } from '../api/common/text.js';
import { unknownFieldFindings } from '../api/common/unknown-fields.js';
import type { AdmissionRequest } from './admission-review.js';

/**
 * Admission warnings for fields the version does not have (`spec.adress`, v1 `spec.network`).
 *
 * The apiserver prunes unknown fields while it decodes the request, before admission, so the object
 * a webhook receives never has them (Kubernetes 1.20 has no server-side field validation either).
 * What does survive is the manifest as the user wrote it, in the annotation `kubectl apply` (and
 * GitOps tools that apply the same way, such as Argo CD) writes: the webhook reads the fields from
 * there. A `kubectl create`, a server-side apply or a client that writes no annotation leaves nothing
 * to read: those get no warning (run `endpoint-operator validate --strict` in the pipeline).
 */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** The annotation is bounded by the apiserver (256 KiB for all annotations); this is a second fence. */
const MAX_LAST_APPLIED_CHARS = 262_144;
/** kubectl prints each warning on its own line; a manifest full of typos must not flood the terminal. */
const MAX_WARNINGS = 20;

function lastApplied(obj: unknown): string | undefined {
  if (!isRecord(obj) || !isRecord(obj.metadata) || !isRecord(obj.metadata.annotations)) return undefined;
  const text = obj.metadata.annotations[LAST_APPLIED_ANNOTATION];
  return typeof text === 'string' && text.length <= MAX_LAST_APPLIED_CHARS ? text : undefined;
}

/**
 * One warning per field of the last-applied manifest that its own version does not have. Only when
 * the annotation is new or changed (CREATE, or an UPDATE that applied a new manifest), so the
 * operator's own updates (finalizers) do not repeat a warning the user has already seen.
 */
export function unknownFieldWarnings(request: AdmissionRequest, kinds: readonly KindDefinition[]): string[] {
  const text = lastApplied(request.object);
  if (text === undefined) return [];
  if (request.operation === 'UPDATE' && lastApplied(request.oldObject) === text) return [];
  let applied: unknown;
  try {
    applied = JSON.parse(text);
  } catch {
    return [];
  }
  if (!isRecord(applied) || typeof applied.apiVersion !== 'string' || applied.kind !== request.kind.kind) return [];
  // The manifest's own version: a v1beta1 manifest may reach a webhook registered for v1 (matchPolicy Equivalent).
  const slash = applied.apiVersion.indexOf('/');
  const group = applied.apiVersion.slice(0, slash);
  const versionName = applied.apiVersion.slice(slash + 1);
  const def = kinds.find((k) => k.group === group && k.kind === request.kind.kind);
  const version = def?.versions.find((v) => v.name === versionName && v.served);
  if (slash < 0 || def === undefined || version === undefined) return [];
  const findings = unknownFieldFindings(def, version, applied);
  const warnings = findings.slice(0, MAX_WARNINGS).map((e) => `${e.field}: ${e.detail}`);
  if (findings.length > MAX_WARNINGS) warnings.push(`and ${findings.length - MAX_WARNINGS} more unknown fields`);
  return warnings;
}
