/**
 * Which DeployedModels of one endpoint are deployed, and under which id. Both reconcilers (the
 * endpoint lists its models, a model reports its own state) decide from this one function so they
 * can never disagree. An id belongs to the oldest DeployedModel claiming it (creationTimestamp,
 * then name); a younger claimant is a duplicate, which keeps the rule stable across restarts and
 * independent of the order events arrive in.
 */
import type { KubeObject } from '../runtime/kube-object.js';
import { nextDeployedModelId } from '../api/prediction/v1/traffic.js';
import { olderFirst, stringAt } from './status-common.js';

export type ModelState =
  | { readonly state: 'deployed'; readonly id: string }
  | { readonly state: 'duplicate'; readonly id: string; readonly owner: string }
  | { readonly state: 'invalid' }
  | { readonly state: 'unassigned' };

/** spec.id, else the id written to status earlier, else one this process assigned and has not seen written back yet. */
export function effectiveId(model: KubeObject, assigned: ReadonlyMap<string, string>): string | undefined {
  return stringAt(model.spec, 'id') ?? stringAt(model.status, 'id') ?? assigned.get(model.metadata.uid ?? '');
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
export function chooseId(model: KubeObject, siblings: readonly KubeObject[], assigned: ReadonlyMap<string, string>): string {
  const used = new Set<string>();
  for (const m of siblings) {
    if (m.metadata.uid === model.metadata.uid) continue;
    const id = effectiveId(m, assigned);
    if (id !== undefined) used.add(id);
  }
  return nextDeployedModelId(used, model.metadata.uid ?? `${model.metadata.namespace ?? ''}/${model.metadata.name ?? ''}`);
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
