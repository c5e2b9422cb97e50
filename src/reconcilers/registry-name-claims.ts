/**
 * Who claims which RegistryService spec.name, over every watched namespace. Shards are per
 * namespace (see operator/shard.ts) but one owner per name is a cluster-wide rule, so every shard
 * feeds its RegistryService informer into this one shared tracker and is told when the claimants of
 * a name change (a claim appears, goes, becomes valid or invalid), to re-reconcile its services of
 * that name: both sides of a conflict are reported, and the next oldest takes over when the owner goes.
 */
import { nameClaims, type NameClaims } from '../api/registry/name-owner.js';
import { registryServiceKind } from '../api/registry/kinds.js';
import type { Informer } from '../kube/informer.js';
import type { KubeObject } from '../api/common/kube-object.js';
import { type ReconcilerSettings } from './context.js';
import { specValidator } from '../api/spec-validator.js';
import { specOf } from '../api/typed-spec.js';

export class RegistryNameClaims {
  /** spec.name → uid → the claimant as last seen. */
  private readonly byName = new Map<string, Map<string, KubeObject>>();
  private readonly listeners: ((name: string) => void)[] = [];

  /** `isClaimant`: may this object own its name (a valid spec, not being deleted)? */
  constructor(private readonly isClaimant: (service: KubeObject) => boolean) {}

  /** Follows the RegistryServices of one informer (call before it syncs). */
  observe(informer: Informer): void {
    informer.addEventHandler({
      onAdd: (s) => this.update(undefined, s),
      onUpdate: (old, s) => this.update(old, s),
      onDelete: (s) => this.update(s, undefined),
    });
  }

  /** Called with a spec.name whenever the set of its claimants changed. */
  onChange(listener: (name: string) => void): void {
    this.listeners.push(listener);
  }

  claims(name: string): NameClaims<KubeObject> {
    return nameClaims([...(this.byName.get(name)?.values() ?? [])]);
  }

  private update(old: KubeObject | undefined, obj: KubeObject | undefined): void {
    const changed = new Set<string>();
    const oldName = old === undefined ? undefined : specOf.registryService(old).name;
    const uid = (obj ?? old)?.metadata.uid ?? '';
    if (oldName !== undefined && this.byName.get(oldName)?.has(uid) === true) {
      const claimants = this.byName.get(oldName);
      claimants?.delete(uid);
      if (claimants?.size === 0) this.byName.delete(oldName);
      changed.add(oldName);
    }
    const name = obj === undefined ? undefined : specOf.registryService(obj).name;
    if (obj !== undefined && name !== undefined && this.isClaimant(obj)) {
      let claimants = this.byName.get(name);
      if (claimants === undefined) this.byName.set(name, (claimants = new Map()));
      claimants.set(uid, obj);
      if (changed.has(name))
        changed.delete(name); // still a claimant of the same name: no news
      else changed.add(name);
    }
    for (const n of changed) for (const l of this.listeners) l(n);
  }
}

/** The tracker with the operator's claim rule: a valid spec, not being deleted. */
export function registryNameClaims(settings: Pick<ReconcilerSettings, 'reservedPrefixes'>): RegistryNameClaims {
  const validate = specValidator(registryServiceKind, settings);
  return new RegistryNameClaims((s) => s.metadata.deletionTimestamp === undefined && validate(s).length === 0);
}
