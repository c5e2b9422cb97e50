import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { withVerdictConditions, type Condition } from '../../runtime/conditions.js';
import type { ReadyVerdict } from '../../api/common/conditions.js';
import { Action, Controller, type ReconcileRequest, type ReconcileResult } from '../../runtime/controller.js';
import { EventRecorder } from '../../runtime/events.js';
import type { Informer } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import { keyOf, type KubeObject, type ResourceRef } from '../../api/common/kube-object.js';
import { LeaderElector } from '../../runtime/leader-election.js';
import { Predicates } from '../../runtime/predicates.js';
import { silentLogger, type Logger } from '../../base/logger.js';
import { StatusWriter } from '../../runtime/status.js';
import { identityVerdict, shopVerdict } from '../identity-status.js';
import type { KubernetesIdentityDirectory } from './directory.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

/** The Lease that picks the one replica writing Shop, ShopUser and AdminUser status. */
export const STATUS_LEASE_NAME = 'endpoint-operator-signin-status';

interface Target {
  readonly name: string;
  readonly kind: 'Shop' | 'ShopUser' | 'AdminUser';
  readonly informer: Informer;
  readonly ref: ResourceRef;
  readonly verdict: (obj: KubeObject) => ReadyVerdict;
}

interface IdentitySpecLike {
  readonly email?: unknown;
  readonly passwordSecretRef?: { readonly name?: unknown };
  readonly memberships?: readonly { readonly shop?: unknown }[];
}

const specOf = (obj: KubeObject): IdentitySpecLike =>
  typeof obj.spec === 'object' && obj.spec !== null ? (obj.spec as IdentitySpecLike) : {};
const emailOf = (obj: KubeObject): string | undefined =>
  typeof specOf(obj).email === 'string' ? (specOf(obj).email as string).toLowerCase() : undefined;

/**
 * Ready of Shops, ShopUsers and AdminUsers, as controllers of the runtime (work queue, per-key
 * backoff on errors, Events on transitions) rather than a scan on every change. A user's Ready
 * depends on other objects, so the identity controllers also watch: the Shops its memberships name
 * (ShopNotFound), the Secret its passwordSecretRef names (SecretNotFound, InvalidPasswordHash), and
 * every identity of either kind with the same email (DuplicateEmail), each mapped back to the users
 * it affects. Run only by the replica holding `STATUS_LEASE_NAME` (see `runStatusControllers`).
 */
export function createStatusControllers(options: {
  client: KubeClient;
  directory: KubernetesIdentityDirectory;
  events: EventRecorder;
  logger?: Logger;
}): Controller[] {
  const { client, directory, events } = options;
  const log = options.logger ?? silentLogger;
  const index = directory.index;
  const targets: Target[] = [
    {
      name: 'signin-shop',
      kind: 'Shop',
      informer: directory.shops,
      ref: posResources.shops,
      verdict: (o) => shopVerdict(o),
    },
    {
      name: 'signin-shopuser',
      kind: 'ShopUser',
      informer: directory.shopUsers,
      ref: posResources.shopUsers,
      verdict: (o) => identityVerdict(index, 'ShopUser', o),
    },
    {
      name: 'signin-adminuser',
      kind: 'AdminUser',
      informer: directory.adminUsers,
      ref: posResources.adminUsers,
      verdict: (o) => identityVerdict(index, 'AdminUser', o),
    },
  ];
  return targets.map((t) => {
    const writer = new StatusWriter({ client, ref: t.ref, kind: t.kind, fieldManager: SIGNIN_FIELD_MANAGER });
    const controller = new Controller({
      name: t.name,
      kind: t.kind,
      primary: t.informer,
      logger: log,
      reconcile: (req) => reconcileReady(t, writer, events, req),
    });
    if (t.kind === 'Shop') return controller;
    /** Keys of this controller's objects that `match`. */
    const users = (match: (user: KubeObject) => boolean): string[] => t.informer.list().filter(match).map(keyOf);
    const sameEmail = (other: KubeObject): string[] => {
      const email = emailOf(other);
      return email === undefined ? [] : users((u) => u !== other && emailOf(u) === email);
    };
    // Spec changes only (generation): our own status writes on users and shops trigger nothing more.
    const specChanges = { predicate: Predicates.generationChanged };
    return (
      controller
        .watches(
          directory.shops,
          (shop) => users((u) => (specOf(u).memberships ?? []).some((m) => m.shop === shop.metadata.name)),
          specChanges,
        )
        .watches(directory.secrets, (secret) =>
          users((u) => specOf(u).passwordSecretRef?.name === secret.metadata.name),
        )
        // An identity of either kind taking, changing or leaving an email: the others holding it.
        .watches(directory.shopUsers, sameEmail, specChanges)
        .watches(directory.adminUsers, sameEmail, specChanges)
    );
  });
}

async function reconcileReady(
  t: Target,
  writer: StatusWriter,
  events: EventRecorder,
  req: ReconcileRequest,
): Promise<ReconcileResult> {
  const obj = t.informer.get(req.namespace, req.name);
  if (!obj || obj.metadata.deletionTimestamp !== undefined) return Action.done();
  const verdict = t.verdict(obj);
  const before = readyOf(obj);
  const { written } = await writer.update(obj, (current) => desiredStatus(current, t.verdict(current)), req.signal);
  if (written && (before?.status !== verdict.status || before.reason !== verdict.reason)) {
    await events.record(obj, verdict.status === 'True' ? 'Normal' : 'Warning', verdict.reason, verdict.message);
  }
  return Action.done();
}

function readyOf(obj: KubeObject): Condition | undefined {
  const status = obj.status as { conditions?: Condition[] } | undefined;
  return status?.conditions?.find((c) => c.type === 'Ready');
}

function desiredStatus(obj: KubeObject, verdict: ReadyVerdict): Record<string, unknown> {
  const status = (typeof obj.status === 'object' && obj.status !== null ? obj.status : {}) as {
    conditions?: Condition[];
  };
  const generation = obj.metadata.generation;
  const conditions = withVerdictConditions(status.conditions, verdict, generation, new Date());
  return { ...status, ...(generation === undefined ? {} : { observedGeneration: generation }), conditions };
}

/**
 * Runs the status controllers on the one replica that holds the `STATUS_LEASE_NAME` Lease of the
 * sign-in namespace (every replica serves sign-ins; one writes status, as client-go's leader election
 * gates controller-runtime managers). A new term gets new controllers: a Controller runs once.
 * Resolves when `signal` aborts.
 */
export async function runStatusControllers(
  options: {
    client: KubeClient;
    namespace: string;
    directory: KubernetesIdentityDirectory;
    logger?: Logger;
    identity?: string;
  },
  signal: AbortSignal,
): Promise<void> {
  const log = options.logger ?? silentLogger;
  const identity = options.identity ?? `${hostname()}-${randomBytes(4).toString('hex')}`;
  const events = new EventRecorder({
    client: options.client,
    component: 'endpoint-operator-signin',
    instance: identity,
    logger: log,
  });
  const elector = new LeaderElector({
    client: options.client,
    namespace: options.namespace,
    name: STATUS_LEASE_NAME,
    identity,
    logger: log,
  });
  await elector.run(
    {
      onStartedLeading: async (term) => {
        const controllers = createStatusControllers({
          client: options.client,
          directory: options.directory,
          events,
          logger: log,
        });
        log.info({ controllers: controllers.length }, 'writing sign-in resource status');
        await Promise.all(controllers.map((c) => c.run(term)));
      },
    },
    signal,
  );
}
