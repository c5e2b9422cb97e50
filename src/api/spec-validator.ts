import type { FieldError } from './common/field-error.js';
import type { KindDefinition } from './common/kind.js';
import type { KubeObject } from './common/kube-object.js';

/**
 * The validator of a kind's storage version, as the reconciler runs it: no old object (transition
 * rules are the webhook's job). Results are remembered per object instance: the informer cache
 * replaces an object on every change, so an instance's spec never changes under the memo, and a
 * service listing a hundred endpoints does not re-validate all of them on every reconcile.
 */
export function specValidator(
  def: KindDefinition,
  settings: { readonly reservedPrefixes: readonly string[] },
): (obj: KubeObject) => FieldError[] {
  const version = def.versions.find((v) => v.storage) ?? def.versions[0];
  const memo = new WeakMap<KubeObject, FieldError[]>();
  return (obj) => {
    if (!version) return [];
    const known = memo.get(obj);
    if (known !== undefined) return known;
    const { status: _status, ...withoutStatus } = obj;
    const errors = version.validate(withoutStatus, undefined, { reservedPrefixes: settings.reservedPrefixes }).errors;
    memo.set(obj, errors);
    return errors;
  };
}
