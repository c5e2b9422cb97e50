/**
 * The CRDs' CEL rules (`x-kubernetes-validations`), so that the apiserver itself refuses what a single
 * object can be judged on, also when the admission webhook is down or bypassed. Each rule's `message` says
 * the rule as the webhook's validators say it. The apiserver shows a refused scalar's value itself
 * (`spec.address: Invalid value: "8.8.8.8:53": must be …`), so a `messageExpression` is added only for what
 * it does not show: the old value of an immutable field, the other field of an exclusive pair. Cross-object
 * rules, warnings and the etag stay in the webhook (README, "Rules only the webhook enforces").
 *
 * Kubernetes' CEL libraries used here: `matches` (RE2), `lowerAscii`, list `sum`, `isIP` (1.31+). The
 * apiserver prices every rule and message by the longest string and largest collection it could meet, so
 * maps and lists that rules iterate over have a bound, and a message never quotes a map key or `string()`
 * of a number (both priced as unbounded).
 */

/** Where the apiserver reports a failed rule, relative to the node it sits on (`.field`). */
export type FieldPathSelector = `.${string}`;

export interface CelRule {
  readonly rule: string;
  readonly message: string;
  readonly messageExpression?: string;
  readonly fieldPath?: FieldPathSelector;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueDuplicate';
}

/** The schema keyword holding `rules`, for a zod `.meta()`. */
export function validations(...rules: CelRule[]): { 'x-kubernetes-validations': CelRule[] } {
  return { 'x-kubernetes-validations': rules };
}

/** A CEL string literal of `text` (single-quoted, escaped). */
export function celString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A CEL string literal holding a regular expression (a JavaScript RegExp's source, RE2-compatible). */
export function celPattern(pattern: RegExp | string): string {
  return celString(typeof pattern === 'string' ? pattern : pattern.source);
}

/** A CEL expression quoting a string value as the validators do: `"value"`. */
export function quoted(expression: string): string {
  return `'"' + ${expression} + '"'`;
}

/**
 * A transition rule refusing any change of the field once set. The apiserver evaluates it only when the
 * field has an old value, so setting it at creation passes; `detail` is the webhook's wording.
 */
export function immutable(
  detail: string,
  shown: 'with the old value' | 'without the old value' = 'with the old value',
): CelRule {
  const message = `field is immutable: ${detail}`;
  // Quoting the old value costs as much as the longest string the field may hold: a field without a
  // maxLength (an enum, an object) would exceed the apiserver's budget, so its message is the static one.
  if (shown === 'without the old value') return { rule: 'self == oldSelf', message };
  return {
    rule: 'self == oldSelf',
    message,
    messageExpression: `'field is immutable (was ' + ${quoted('oldSelf')} + '): ' + ${celString(detail)}`,
  };
}

/**
 * A rule that every key of a map satisfies `predicate` (a CEL expression of `k`). Its message is static:
 * the apiserver estimates a message that quotes a map key at the longest string a request can hold, far
 * beyond its budget, so the key is named by the webhook and `validate`, not here.
 */
export function everyKey(predicate: string, detail: string): CelRule {
  return { rule: `self.all(k, ${predicate})`, message: `every key must be valid: ${detail}` };
}
