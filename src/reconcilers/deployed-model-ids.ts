/**
 * Which DeployedModels of one endpoint are deployed, and under which id. Both reconcilers (the
 * endpoint lists its models, a model reports its own state) decide from this one function so they
 * can never disagree. An id belongs to the oldest DeployedModel claiming it (creationTimestamp,
 * then name); a younger claimant is a duplicate, which keeps the rule stable across restarts and
 * independent of the order events arrive in.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../api/common/kube-object.js';
import { olderFirst } from './status-common.js';
import { specOf, statusOf } from '../api/typed-spec.js';

export type ModelState =
  | { readonly state: 'deployed'; readonly id: string }
  | { readonly state: 'duplicate'; readonly id: string; readonly owner: string }
  | { readonly state: 'invalid' }
  | { readonly state: 'unassigned' };

/** spec.id, else the id written to status earlier, else one this process assigned and has not seen written back yet. */
export function effectiveId(model: KubeObject, assigned: ReadonlyMap<string, string>): string | undefined {
  return specOf.deployedModel(model).id ?? statusOf.deployedModel(model).id ?? assigned.get(model.metadata.uid ?? '');
}

/**
 * The state of every DeployedModel referencing one endpoint, keyed by metadata.name.
 * `isValid` says whether a model's spec passes validation: an invalid model claims no id.
 */
export function resolveModelStates(
  models: readonly KubeObject[],
  isValid: (model: KubeObject) => boolean,
  assigned: ReadonlyMap<string, string>,
): Map<string, ModelState> {
  const states = new Map<string, ModelState>();
  const owners = new Map<string, string>();
  for (const model of [...models].sort(olderFirst)) {
    const name = model.metadata.name ?? '';
    if (!isValid(model)) {
      states.set(name, { state: 'invalid' });
      continue;
    }
    const id = effectiveId(model, assigned);
    if (id === undefined) {
      states.set(name, { state: 'unassigned' });
      continue;
    }
    const owner = owners.get(id);
    if (owner === undefined) {
      owners.set(id, name);
      states.set(name, { state: 'deployed', id });
    } else {
      states.set(name, { state: 'duplicate', id, owner });
    }
  }
  return states;
}

/**
 * Chooses an id for `model` that no DeployedModel of the endpoint uses or has been promised.
 * Seeded by metadata.uid, so a retry after a failed status write picks the same id again.
 */
export function chooseId(
  model: KubeObject,
  siblings: readonly KubeObject[],
  assigned: ReadonlyMap<string, string>,
): string {
  const used = new Set<string>();
  for (const m of siblings) {
    if (m.metadata.uid === model.metadata.uid) continue;
    const id = effectiveId(m, assigned);
    if (id !== undefined) used.add(id);
  }
  return nextDeployedModelId(
    used,
    model.metadata.uid ?? `${model.metadata.namespace ?? ''}/${model.metadata.name ?? ''}`,
  );
}

/**
 * Ids this process assigned, by DeployedModel uid, until the model is gone. The informer cache
 * shows a status write only after the watch event arrives; without this memory a second model of
 * the same endpoint reconciled in between could be given the same id.
 */
export class IdAssignments {
  private readonly byUid = new Map<string, string>();

  get view(): ReadonlyMap<string, string> {
    return this.byUid;
  }

  record(uid: string, id: string): void {
    this.byUid.set(uid, id);
  }

  forget(uid: string): void {
    this.byUid.delete(uid);
  }
}

/**
 * Ids are drawn from the 10-digit range without a leading zero, so every assigned id has the same
 * length (readable in `kubectl get`) and is valid under the 1–10 digit rule.
 */
const ID_MIN = 1_000_000_000n;
const ID_SPAN = 9_000_000_000n;

/**
 * A deployed-model id not in `usedIds`, chosen deterministically from `seed` (for example the
 * DeployedModel's metadata.uid), so a reconciler that crashes between choosing an id and writing
 * it picks the same one again. Collisions are resolved by linear probing over the 9·10⁹ ids.
 */
export function nextDeployedModelId(usedIds: Iterable<string>, seed: string): string {
  const used = new Set(usedIds);
  const digest = createHash('sha256').update(seed).digest();
  const start = digest.readBigUInt64BE(0) % ID_SPAN;
  // The used set is finite, so at most used.size + 1 probes are needed.
  for (let probe = 0n; probe <= BigInt(used.size); probe++) {
    const candidate = (ID_MIN + ((start + probe) % ID_SPAN)).toString();
    if (!used.has(candidate)) return candidate;
  }
  throw new Error('every deployed-model id is in use');
}
