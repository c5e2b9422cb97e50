import { createHash } from 'node:crypto';
import { isAlreadyExists, isConflict } from '../../kube/api-error.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { microTime } from '../../runtime/leader-election.js';
import { coreResources, type KubeObject } from '../../api/common/kube-object.js';
import { realClock, type Clock } from '../../base/clock.js';
import type { AttemptLedger, Claim } from '../account-budget.js';
import { SIGNIN_FIELD_MANAGER } from './resources.js';

export const ATTEMPTS_LABEL = 'pos.endpoint-operator.dev/sign-in-attempts';
const WINDOW_START = 'pos.endpoint-operator.dev/window-start';
const CLAIMED = 'pos.endpoint-operator.dev/claimed';

// Each conflict means another replica claimed first; a few retries always make progress.
const MAX_ATTEMPTS = 8;

/** The Lease of one account: named by a hash of the email, so no address appears in object names or logs. */
export function attemptLeaseName(accountKey: string): string {
  return `signin-attempts-${createHash('sha256').update(accountKey, 'utf8').digest('hex').slice(0, 40)}`;
}

/**
 * The per-account attempt budget of every replica, in one `coordination.k8s.io` Lease per account
 * that was tried from an unknown client: annotations hold the window start and the attempts claimed
 * in it. A claim is a read and a PUT carrying the read resourceVersion, so two replicas claiming at
 * once cannot both take the last attempts (409 → read again). Writes are bounded: a claim takes a
 * block of attempts (a tenth of the limit), so a replica writes at most about ten times per account
 * per window, and a client with a device token never writes. Leases whose window ended are deleted
 * by `sweep`.
 */
export class KubernetesAttemptLedger implements AttemptLedger {
  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly clock: Clock = realClock,
  ) {}

  async claim(accountKey: string, want: number, limit: number, windowMs: number): Promise<Claim> {
    const name = attemptLeaseName(accountKey);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = this.clock.now();
      const lease = await this.client.get<KubeObject>(coreResources.leases, this.namespace, name);
      const current = lease ? readWindow(lease) : undefined;
      const fresh = !current || now >= current.start + windowMs;
      const start = fresh ? now : current.start;
      const claimed = fresh ? 0 : current.claimed;
      const granted = Math.max(0, Math.min(want, limit - claimed));
      const windowEndsAt = start + windowMs;
      if (granted === 0) return { granted, windowEndsAt };
      const body = leaseObject(name, start, claimed + granted, windowMs, lease?.metadata.resourceVersion);
      try {
        if (lease)
          await this.client.replace(coreResources.leases, this.namespace, name, body, {
            fieldManager: SIGNIN_FIELD_MANAGER,
          });
        else
          await this.client.create(coreResources.leases, this.namespace, body, { fieldManager: SIGNIN_FIELD_MANAGER });
        return { granted, windowEndsAt };
      } catch (err) {
        if (!isConflict(err) && !isAlreadyExists(err)) throw err;
      }
    }
    throw new Error(`could not claim sign-in attempts for Lease ${this.namespace}/${name}: too many concurrent claims`);
  }

  /** Deletes the Leases whose window ended more than `graceMs` ago; returns how many. */
  async sweep(windowMs: number, graceMs = 60_000): Promise<number> {
    let removed = 0;
    let cont: string | undefined;
    do {
      const page = await this.client.list<KubeObject>(coreResources.leases, this.namespace, {
        labelSelector: `${ATTEMPTS_LABEL}=true`,
        limit: 500,
        ...(cont ? { continue: cont } : {}),
      });
      for (const lease of page.items) {
        const w = readWindow(lease);
        const name = lease.metadata.name;
        if (name === undefined || (w && w.start + windowMs + graceMs > this.clock.now())) continue;
        // Only the version we judged: a claim that renewed the window meanwhile wins (409 is ignored).
        try {
          if (
            await this.client.delete(coreResources.leases, this.namespace, name, {
              preconditions: { resourceVersion: lease.metadata.resourceVersion },
            })
          )
            removed++;
        } catch (err) {
          if (!isConflict(err)) throw err;
        }
      }
      cont = page.continue;
    } while (cont);
    return removed;
  }
}

function readWindow(lease: KubeObject): { start: number; claimed: number } | undefined {
  const a = lease.metadata.annotations ?? {};
  const start = Date.parse(a[WINDOW_START] ?? '');
  const claimed = Number(a[CLAIMED]);
  return Number.isFinite(start) && Number.isInteger(claimed) && claimed >= 0 ? { start, claimed } : undefined;
}

function leaseObject(
  name: string,
  start: number,
  claimed: number,
  windowMs: number,
  resourceVersion: string | undefined,
): KubeObject {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      labels: {
        [ATTEMPTS_LABEL]: 'true',
        'app.kubernetes.io/name': 'endpoint-operator',
        'app.kubernetes.io/component': 'signin',
      },
      annotations: { [WINDOW_START]: new Date(start).toISOString(), [CLAIMED]: String(claimed) },
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    // For `kubectl get lease`: the window as a lease (no holder: nobody leads anything).
    spec: {
      leaseDurationSeconds: Math.ceil(windowMs / 1000),
      acquireTime: microTime(start),
      renewTime: microTime(start),
    },
  };
}
