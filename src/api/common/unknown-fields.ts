import type { z } from 'zod';
import { fieldErrors, type FieldError } from './field-error.js';
import { FieldPath } from './field-path.js';
import type { KindDefinition, KindVersion } from './kind.js';
import { nodeOf, type Node } from './schema-walk.js';
import { isRecord, keyInPath } from './text.js';

/**
 * Fields a version does not have: `spec.adress`, v1 `spec.network`, v1beta1 `spec.annotations`.
 * The apiserver prunes them (structural schemas drop unknown fields without a word, Kubernetes
 * 1.20 has no server-side field validation), so a typo silently loses the value. `validate` warns
 * (refuses with --strict, as kubeconform's -strict does) and the admission webhook answers with a
 * warning when it can see them (webhook/unknown-field-warnings.ts).
 */
export interface UnknownField {
  /** `spec.adress`, `spec.encryptionSpec.kmsKeyname`. */
  readonly path: string;
  /** The closest field this object does have at that place, when one is near (a likely typo). */
  readonly didYouMean?: string;
}

/** The fields of an object's top level and metadata, as the apiserver knows them (ObjectMeta of 1.20). */
const TOP_LEVEL = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];
const OBJECT_META = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'clusterName',
  'managedFields',
];

/**
 * Every field of `obj` (a whole object: apiVersion, kind, metadata, spec) that the version's
 * spec schema, ObjectMeta or the top level does not declare. `status` is not checked: a manifest's
 * status is ignored on create (status subresource) and is the operator's to write.
 */
export function unknownFields(specSchema: z.ZodType, obj: unknown): UnknownField[] {
  if (!isRecord(obj)) return [];
  const found: UnknownField[] = [];
  const root = FieldPath.root();
  for (const key of Object.keys(obj)) if (!TOP_LEVEL.includes(key)) found.push(unknown(root, key, TOP_LEVEL));
  if (isRecord(obj.metadata)) {
    for (const key of Object.keys(obj.metadata))
      if (!OBJECT_META.includes(key)) found.push(unknown(root.child('metadata'), key, OBJECT_META));
  }
  walk(nodeOf(specSchema), obj.spec, root.child('spec'), found, 0);
  return found;
}

/** Schemas are a few levels deep; this bound only stops a pathological input from recursing far. */
const MAX_DEPTH = 32;

function walk(node: Node, value: unknown, path: FieldPath, found: UnknownField[], depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (node.kind === 'object' && isRecord(value)) {
    for (const key of Object.keys(value)) {
      const field = node.field(key);
      if (field === undefined) {
        found.push(unknown(path, key, node.names()));
        continue;
      }
      const child = nodeOf(field);
      // Only containers can hold unknown fields; a scalar field needs no path.
      if (child.kind === 'object' || child.kind === 'map' || child.kind === 'list')
        walk(child, value[key], path.child(key), found, depth + 1);
    }
  } else if (node.kind === 'map' && isRecord(value)) {
    const valueNode = nodeOf(node.value);
    if (valueNode.kind === 'object' || valueNode.kind === 'list' || valueNode.kind === 'map') {
      for (const [key, v] of Object.entries(value)) walk(valueNode, v, path.key(keyInPath(key)), found, depth + 1);
    }
  } else if (node.kind === 'list' && Array.isArray(value)) {
    const element = nodeOf(node.element);
    if (element.kind === 'object' || element.kind === 'list' || element.kind === 'map')
      value.forEach((v, i) => walk(element, v, path.index(i), found, depth + 1));
  }
}

function unknown(parent: FieldPath, key: string, known: readonly string[]): UnknownField {
  // An empty key would vanish from the path; show it as the empty string it is.
  const path = parent.child(key === '' ? '""' : keyInPath(key)).toString();
  const near = closest(key, known);
  return near === undefined ? { path } : { path, didYouMean: parent.child(near).toString() };
}

/** The known name within a small edit distance of `key` (a typo or a case slip), if exactly one is nearest. */
function closest(key: string, known: readonly string[]): string | undefined {
  if (key.length > 64) return undefined;
  const budget = key.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = budget + 1;
  for (const name of known) {
    const d = name.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, name, budget);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** Damerau-Levenshtein (adjacent transpositions count 1), giving up past `budget`. */
function editDistance(a: string, b: string, budget: number): number {
  if (Math.abs(a.length - b.length) > budget) return budget + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const prev = rows[i - 1] ?? [];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? budget + 1;
}

/** What to say about one unknown field: what the apiserver does with it, and the likely fix. */
export function unknownFieldDetail(field: UnknownField, versionLabel: string, hint?: string): string {
  const fix = hint ?? (field.didYouMean === undefined ? 'remove it' : `did you mean ${field.didYouMean}?`);
  return `unknown field: not in ${versionLabel}, so the apiserver drops (prunes) it and its value is lost; ${fix}`;
}

/** Fields of `obj` that `version` does not have, as findings (errors under --strict, else warnings). */
export function unknownFieldFindings(def: KindDefinition, version: KindVersion, obj: unknown): FieldError[] {
  const label = `${def.kind} ${def.group}/${version.name}`;
  return unknownFields(version.spec, obj).map((f) => {
    const hint = version.unknownFieldHints?.[f.path] ?? otherVersionHint(def, version, f.path);
    return fieldErrors.forbidden(f.path, unknownFieldDetail(f, label, hint));
  });
}

/** `spec.network` on v1 when v1beta1 has it: name the version that does. */
function otherVersionHint(def: KindDefinition, version: KindVersion, path: string): string | undefined {
  if (!path.startsWith('spec.')) return undefined;
  const name = path.slice('spec.'.length);
  if (name.includes('.') || name.includes('[')) return undefined;
  const others = def.versions.filter(
    (v) => v !== version && v.served && unknownFields(v.spec, { spec: { [name]: null } }).length === 0,
  );
  if (others.length === 0) return undefined;
  return `only ${others.map((v) => `${def.group}/${v.name}`).join(' and ')} has ${path}: apply the object in that version to set it`;
}
