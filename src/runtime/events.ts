/**
 * Kubernetes Events (core/v1) for notable transitions, shown by `kubectl describe`.
 * Repeats of the same (object, type, reason, message) bump `count` and `lastTimestamp` of
 * the existing Event instead of creating new objects, as client-go's EventCorrelator does,
 * so a hot loop cannot flood etcd. Recording never throws and never fails a reconcile.
 */
import { randomBytes } from 'node:crypto';
import { isNotFound } from '../kube/api-error.js';
import { realClock, type Clock } from '../base/clock.js';
import { rfc3339 } from './conditions.js';
import type { KubeClient } from '../kube/kube-client.js';
import { coreResources, type KubeObject } from '../api/common/kube-object.js';
import { silentLogger, type Logger } from '../base/logger.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorderOptions {
  /** A KubeClient (only `create` and `patch` are used). */
  readonly client: Pick<KubeClient, 'create' | 'patch'>;
  /** `source.component` / `reportingComponent`, e.g. `endpoint-operator`. */
  readonly component: string;
  /** `reportingInstance` (the pod name). */
  readonly instance?: string;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** A repeat within this window is aggregated into the existing Event; default 10 min (client-go's). */
  readonly aggregationWindowMs?: number;
  /** Remembered series; the oldest are forgotten beyond this. Default 4096 (client-go's LRU size). */
  readonly maxSeries?: number;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  firstTimestamp: string;
  lastSeenMs: number;
}

export class EventRecorder {
  private readonly series = new Map<string, Series>();
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(private readonly options: EventRecorderOptions) {
    this.clock = options.clock ?? realClock;
    this.log = options.logger ?? silentLogger;
  }

  /** Records an event about `regarding` (which needs apiVersion, kind and metadata). Resolves `false` if it could not be written. */
  async record(regarding: KubeObject, type: EventType, reason: string, message: string): Promise<boolean> {
    try {
      await this.write(regarding, type, reason, message);
      return true;
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), reason }, 'could not record event');
      return false;
    }
  }

  private async write(regarding: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const { client } = this.options;
    const namespace = regarding.metadata.namespace ?? 'default';
    const key = [regarding.metadata.uid ?? `${namespace}/${regarding.metadata.name ?? ''}`, type, reason, message].join(
      '\u0000',
    );
    const nowMs = this.clock.now();
    const now = rfc3339(new Date(nowMs));
    const existing = this.series.get(key);
    if (existing && nowMs - existing.lastSeenMs < (this.options.aggregationWindowMs ?? 600_000)) {
      existing.count++;
      existing.lastSeenMs = nowMs;
      try {
        await client.patch(
          coreResources.events,
          existing.namespace,
          existing.name,
          { count: existing.count, lastTimestamp: now },
          { type: 'merge' },
        );
        return;
      } catch (err) {
        if (!isNotFound(err)) throw err;
        // The Event expired (the apiserver's event TTL, 1 h by default): start a new one.
      }
    }
    const name = `${regarding.metadata.name ?? 'object'}.${nowMs.toString(16)}${randomBytes(2).toString('hex')}`;
    await client.create(coreResources.events, namespace, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: regarding.apiVersion,
        kind: regarding.kind,
        namespace: regarding.metadata.namespace,
        name: regarding.metadata.name,
        uid: regarding.metadata.uid,
        resourceVersion: regarding.metadata.resourceVersion,
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: this.options.component },
      reportingComponent: this.options.component,
      reportingInstance: this.options.instance ?? '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    this.remember(key, { name, namespace, count: 1, firstTimestamp: now, lastSeenMs: nowMs });
  }

  private remember(key: string, s: Series): void {
    this.series.delete(key);
    this.series.set(key, s);
    const max = this.options.maxSeries ?? 4096;
    while (this.series.size > max) {
      const oldest = this.series.keys().next().value;
      if (oldest === undefined) break;
      this.series.delete(oldest);
    }
  }
}
