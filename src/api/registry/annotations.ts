import { fieldErrors, type FieldError } from '../common/field-error.js';
import type { FieldPath } from '../common/field-path.js';
import { isDns1123Subdomain } from '../common/object-meta.js';
import { codePointLength, keyInPath, truncateText } from '../common/text.js';

/**
 * Registry annotations (v1 `annotations`, v1beta1 `metadata`: the same stored data), with Service
 * Directory's rules: a key is an optional DNS-subdomain prefix and `/`, then a name; all keys and
 * values together hold at most 512 characters. Keys under a reserved prefix belong to the operator
 * (Service Directory reserves `google.com/` the same way): they are accepted and kept in spec, so a
 * GitOps tool sees no drift, but they are ignored, i.e. left out of the effective set and the budget.
 */

/** Service Directory's limit on one endpoint's annotations, counted over every key and value. */
export const ANNOTATIONS_BUDGET = 512;
export const MAX_ANNOTATION_NAME_LENGTH = 63;
/**
 * At most this many entries, reserved keys included: every key has a character, so the budget alone
 * allows no more, and the apiserver needs a bound to price the CRD's rules over the map.
 */
export const MAX_ANNOTATIONS = ANNOTATIONS_BUDGET;
export const MAX_ANNOTATION_PREFIX_LENGTH = 253;

const ANNOTATION_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/**
 * A whole key as one RE2 pattern, for the CRD's CEL rule (with the prefix's 253-character total checked
 * beside it); `annotationKeyProblem` says which part is wrong.
 */
export const ANNOTATION_KEY =
  /^([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
/** RFC 1035 §2.3.4: a DNS label has at most 63 characters. */
export const MAX_DNS_LABEL_LENGTH = 63;

/** A reserved prefix as configured (`endpoint-operator.dev` or `endpoint-operator.dev/`), without the slash, lowercased. */
function normalisePrefix(prefix: string): string {
  return (prefix.endsWith('/') ? prefix.slice(0, -1) : prefix).toLowerCase();
}

/**
 * True when `key` has a prefix equal to one of `prefixes` or a subdomain of one:
 * `endpoint-operator.dev/x` and `team.endpoint-operator.dev/x`, but not `myendpoint-operator.dev/x`.
 */
export function isReservedKey(key: string, prefixes: readonly string[]): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const prefix = key.slice(0, slash).toLowerCase();
  return prefixes.some((p) => {
    const reserved = normalisePrefix(p);
    return reserved !== '' && (prefix === reserved || prefix.endsWith(`.${reserved}`));
  });
}

/** The annotations that take effect: every entry whose key is not under a reserved prefix. */
export function effectiveAnnotations(
  annotations: Readonly<Record<string, string>> | undefined,
  reservedPrefixes: readonly string[],
): Record<string, string> {
  const effective: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!isReservedKey(key, reservedPrefixes)) effective[key] = value;
  }
  return effective;
}

/** Why `key` is not a valid annotation key, or undefined when it is. */
export function annotationKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2)
    return "a key is an optional prefix and a name separated by one '/' (example.com/name), so it holds at most one '/'";
  const name = parts.length === 2 ? (parts[1] ?? '') : key;
  if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    if (prefix === '') return "the prefix before '/' must not be empty (write name, or example.com/name)";
    const prefixLength = codePointLength(prefix);
    if (prefixLength > MAX_ANNOTATION_PREFIX_LENGTH)
      return `the prefix has ${prefixLength} characters; at most ${MAX_ANNOTATION_PREFIX_LENGTH}`;
    if (!isDns1123Subdomain(prefix))
      return "the prefix must be a DNS subdomain: lowercase labels of letters, digits and '-', separated by '.'";
    // isDns1123Subdomain, like Kubernetes' IsDNS1123Subdomain, checks only the total length; the
    // seed's prefix is "dot-separated DNS labels", and a label has at most 63 characters.
    const longLabel = prefix.split('.').find((label) => label.length > MAX_DNS_LABEL_LENGTH);
    if (longLabel !== undefined) {
      return `the prefix label ${JSON.stringify(truncateText(longLabel, 24))} has ${longLabel.length} characters; a DNS label has at most ${MAX_DNS_LABEL_LENGTH}`;
    }
  }
  if (name === '') return 'the name must not be empty';
  const nameLength = codePointLength(name);
  if (nameLength > MAX_ANNOTATION_NAME_LENGTH)
    return `the name has ${nameLength} characters; at most ${MAX_ANNOTATION_NAME_LENGTH}`;
  if (!ANNOTATION_NAME.test(name))
    return "the name must begin and end with a letter or digit, with only letters, digits, '-', '_' and '.' between";
  return undefined;
}

/** What a registry annotation map contributes to a validation result. */
export interface AnnotationsVerdict {
  readonly errors: FieldError[];
  readonly warnings: string[];
}

/**
 * Checks every key, the 512-character budget over the non-reserved entries, and names each reserved
 * key in a warning. `path` is the map's field (`spec.annotations`, `spec.metadata`).
 */
export function validateAnnotations(
  annotations: Readonly<Record<string, string>>,
  path: FieldPath,
  reservedPrefixes: readonly string[],
): AnnotationsVerdict {
  const errors: FieldError[] = [];
  const warnings: string[] = [];
  let used = 0;
  for (const [key, value] of Object.entries(annotations)) {
    const at = path.key(keyInPath(key)).toString();
    // The seed: a key under a reserved prefix is "not an error: the entry is silently ignored". It is
    // not judged either: its syntax is the prefix owner's business, so only a warning names it.
    if (isReservedKey(key, reservedPrefixes)) {
      warnings.push(
        `${at}: the key is under a reserved prefix (${reservedPrefixes.map(normalisePrefix).join(', ')} and their subdomains) and is ignored: kept in spec, not validated, left out of the effective annotations and of the ${ANNOTATIONS_BUDGET}-character budget`,
      );
      continue;
    }
    const problem = annotationKeyProblem(key);
    if (problem !== undefined) errors.push(fieldErrors.invalid(at, key, `invalid key: ${problem}`));
    used += codePointLength(key) + codePointLength(value);
  }
  const count = Object.keys(annotations).length;
  if (count > MAX_ANNOTATIONS) {
    errors.push({
      field: path.toString(),
      type: 'FieldValueTooMany',
      value: count,
      detail: `must have at most ${MAX_ANNOTATIONS} entries, reserved keys included`,
    });
  }
  if (used > ANNOTATIONS_BUDGET) {
    errors.push({
      field: path.toString(),
      type: 'FieldValueTooLong',
      value: `${used} characters`,
      detail: `must have at most ${ANNOTATIONS_BUDGET} characters in total over all keys and values (keys under a reserved prefix are not counted); remove ${used - ANNOTATIONS_BUDGET}`,
    });
  }
  return { errors, warnings };
}
