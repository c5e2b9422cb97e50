/**
 * Ready of Shops, ShopUsers and AdminUsers: the sign-in kinds' controllers, made by the shards' one controller
 * factory (`kindController`) from their bindings (`signInKindBindings`) and run by the operator among its own, under
 * its one Lease (start.ts). Their primary informers are the sign-in API's cache of its namespace
 * (`KubernetesIdentityDirectory`), which every replica runs to serve sign-ins.
 */
import { withVerdictConditions, type Condition } from '../runtime/conditions.js';
import type { ReadyVerdict } from '../api/common/conditions.js';
import { Action, type Controller, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { Informer } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { keyOf, type KubeObject } from '../api/common/kube-object.js';
import { signInKindBindings, type SignInKind } from '../api/kind-bindings.js';
import { Predicates } from '../runtime/predicates.js';
import { silentLogger, type Logger } from '../base/logger.js';
import { StatusWriter } from '../runtime/status.js';
import { identityVerdict, shopVerdict } from '../signin/identity-status.js';
import type { KubernetesIdentityDirectory } from '../signin/kube/directory.js';
import { SIGNIN_FIELD_MANAGER } from '../signin/kube/resources.js';
import { kindController } from './shard.js';

interface Target {
  readonly which: SignInKind;
  readonly informer: Informer;
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
 * The three controllers (work queue, per-key backoff on errors, Events on transitions) rather than a scan on every
 * change. A user's Ready depends on other objects, so the identity controllers also watch: the Shops its memberships
 * name (ShopNotFound), the Secret its passwordSecretRef names (SecretNotFound, InvalidPasswordHash), and every
 * identity of either kind with the same email (DuplicateEmail), each mapped back to the users it affects.
 */
export function signInControllers(options: {
  readonly client: KubeClient;
  readonly directory: KubernetesIdentityDirectory;
  readonly events: EventRecorder;
  /** Default 1. */
  readonly workers?: number;
  readonly log?: Logger;
}): Controller[] {
  const { client, directory, events } = options;
  const log = options.log ?? silentLogger;
  const index = directory.index;
  const targets: Target[] = [
    { which: 'shops', informer: directory.shops, verdict: (o) => shopVerdict(o) },
    { which: 'shopUsers', informer: directory.shopUsers, verdict: (o) => identityVerdict(index, 'ShopUser', o) },
    { which: 'adminUsers', informer: directory.adminUsers, verdict: (o) => identityVerdict(index, 'AdminUser', o) },
  ];
  return targets.map((t) => {
    const binding = signInKindBindings[t.which];
    const writer = new StatusWriter({
      client,
      ref: binding.resource,
      kind: binding.kind,
      fieldManager: SIGNIN_FIELD_MANAGER,
    });
    const controller = kindController({
      name: binding.controllerName,
      binding,
      primary: t.informer,
      reconcile: (req) => reconcileReady(t, writer, events, req),
      namespace: directory.namespace,
      workers: options.workers ?? 1,
      log,
    });
    if (t.which === 'shops') return controller;
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
