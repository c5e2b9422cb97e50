/**
 * Writes `status` through the `/status` subresource, and only when it changed: an unchanged
 * write would still bump resourceVersion and wake every watcher (including this operator).
 * The patch carries `metadata.resourceVersion`, which makes the apiserver enforce optimistic
 * concurrency; on 409 Conflict the object is read again and the status recomputed from it.
 */
import { isConflict } from '../kube/api-error.js';
import { createMergePatch } from './json-diff.js';
import type { KubeClient } from '../kube/kube-client.js';
import type { KubeObject, ResourceRef } from '../api/common/kube-object.js';
import { statusConflicts, statusWrites } from '../base/metrics.js';

export interface StatusWriterOptions {
  /** A KubeClient (only `get` and `patch` are used). */
  readonly client: Pick<KubeClient, 'get' | 'patch'>;
  readonly ref: ResourceRef;
  /** Label of `endpoint_operator_status_writes_total{kind}`. */
  readonly kind: string;
  readonly fieldManager: string;
  /** Retries after a 409 before giving up (the error then goes to the controller's backoff). Default 5. */
  readonly maxConflictRetries?: number;
}

export interface StatusUpdateResult<T> {
  /** Whether a PATCH was sent and accepted. */
  readonly written: boolean;
  /** The object after the write (or as read); `undefined` if it was deleted meanwhile. */
  readonly object: T | undefined;
}

export class StatusWriter {
  constructor(private readonly options: StatusWriterOptions) {}

  /**
   * Computes the desired status from `obj` with `desired(current)` and writes it if it differs
   * from `current.status` (ignoring key order). `desired` may be called again with a fresh
   * copy after a conflict, so it must be a function of the object it is given.
   */
  async update<T extends KubeObject>(
    obj: T,
    desired: (current: T) => unknown,
    signal?: AbortSignal,
  ): Promise<StatusUpdateResult<T>> {
    const { client, ref, kind, fieldManager } = this.options;
    const maxRetries = this.options.maxConflictRetries ?? 5;
    let current: T | undefined = obj;
    for (let attempt = 0; ; attempt++) {
      const status = desired(current);
      const patch = createMergePatch(current.status, status);
      if (patch === undefined) return { written: false, object: current };
      const name: string = current.metadata.name ?? '';
      try {
        const updated = await client.patch<T>(
          ref,
          current.metadata.namespace,
          name,
          { metadata: { resourceVersion: current.metadata.resourceVersion }, status: patch },
          { type: 'merge', subresource: 'status', fieldManager, signal },
        );
        statusWrites.inc({ kind });
        return { written: true, object: updated };
      } catch (err) {
        if (!isConflict(err) || attempt >= maxRetries) throw err;
        statusConflicts.inc({ kind });
        current = await client.get<T>(ref, current.metadata.namespace, name, { signal });
        if (!current) return { written: false, object: undefined };
      }
    }
  }
}
