/**
 * Server-side apply conflicts, read from the apiserver's 409 Status: each `details.causes[]` entry is one field
 * (`field: ".spec.displayName"`) and the manager that owns it (`message: conflict with "argocd-controller" using
 * prediction.endpoint-operator.dev/v1`). The policy (kubectl's: `--force-conflicts` is the caller's choice, never
 * the server's) is decided here: a field owned by another API caller is taken over, as Vertex lets any authorised
 * user update; a field owned by anyone else (Argo CD, Flux, kubectl) is never silently overwritten.
 */
import { isRecord } from '../../api/common/kube-object.js';
import { GoogleApiError } from '../google-errors.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import { isApiManager } from './field-manager.js';
import { fieldManagers } from './owned-fields.js';

export interface FieldConflict {
  /** The object's field, as the apiserver names it without its leading dot: `spec.displayName`. */
  readonly field: string;
  readonly manager: string;
}

const CONFLICT_WITH = /conflict with "((?:[^"\\]|\\.)*)"/;

/** The conflicts of a 409 Status body; empty when it is not an apply conflict. */
export function applyConflicts(status: unknown): FieldConflict[] {
  if (!isRecord(status) || !isRecord(status.details) || !Array.isArray(status.details.causes)) return [];
  const out: FieldConflict[] = [];
  for (const cause of status.details.causes as unknown[]) {
    if (!isRecord(cause) || typeof cause.message !== 'string') continue;
    const m = CONFLICT_WITH.exec(cause.message);
    if (m === null) continue;
    const field = typeof cause.field === 'string' ? cause.field.replace(/^\./, '') : '';
    out.push({ field, manager: (m[1] ?? '').replace(/\\(.)/g, '$1') });
  }
  return out;
}

/** Whether the write may be re-applied with force: every conflicting manager is another API caller. */
export function mayForce(conflicts: readonly FieldConflict[]): boolean {
  return conflicts.length > 0 && conflicts.every((c) => isApiManager(c.manager));
}

/**
 * ABORTED naming each field and its manager: `spec.displayName is managed by "argocd-controller" (GitOps);
 * change it in Git, or ask its owner`. `described` is the object (`Model "iris" in namespace "team-a"`).
 */
export function conflictRefusal(described: string, conflicts: readonly FieldConflict[]): GoogleApiError {
  const others = conflicts.filter((c) => !isApiManager(c.manager));
  const byManager = new Map<string, string[]>();
  for (const c of others) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), c.field || '(a field)']);
  const parts = [...byManager].map(
    ([manager, fields]) => `${fields.join(', ')} ${fields.length === 1 ? 'is' : 'are'} managed by "${manager}"`,
  );
  return new GoogleApiError(
    'ABORTED',
    `${described}: ${parts.join('; ')} (GitOps or another tool, not this API); change it in Git, or ask its owner. Nothing was written.`,
  );
}

/**
 * A masked field the caller clears, owned by a manager that is not an API caller: server-side apply would leave it
 * in place (a manager releases only what it owned), so the update would do nothing and say it did. Each such field
 * and its manager, for conflictRefusal, so a field Git owns is never silently kept either.
 */
export function clearConflicts(obj: KubeObject, cleared: readonly (readonly string[])[]): FieldConflict[] {
  return cleared.flatMap((path) =>
    fieldManagers(obj, path)
      .filter((manager) => !isApiManager(manager))
      .map((manager) => ({ field: path.join('.'), manager })),
  );
}
