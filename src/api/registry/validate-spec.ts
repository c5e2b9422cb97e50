import type { z } from 'zod';
import { decode } from '../common/decode.js';
import { fieldErrors, renderValue, type FieldError, type ValidationResult } from '../common/field-error.js';
import { FieldPath } from '../common/field-path.js';
import { isRecord } from '../common/text.js';
import { withoutUnset } from '../common/unset.js';
import { validateAnnotations } from './annotations.js';

/** Why a changed immutable field is refused, worded the same by the webhook and by the CRDs' CEL rules (fields.ts). */
export const IMMUTABLE_DETAIL =
  'it can only be set when the object is created; delete and re-create the object to change it';

/**
 * A spec field whose rules live in code (a name grammar, an IP address parser) and whose zod pattern
 * only mirrors them for the CRD: when the raw value has `type`, the check's precise message replaces
 * zod's generic one, so a bad value gets exactly one error.
 */
export type OwnedField =
  | { readonly type: 'string'; readonly check: (value: string, field: string) => FieldError[] }
  | { readonly type: 'number'; readonly check: (value: number, field: string) => FieldError[] };

/** The owned field's errors when the raw value has its type, else undefined (zod's errors stand). */
function checkOwned(f: OwnedField, value: unknown, field: string): FieldError[] | undefined {
  if (f.type === 'string') return typeof value === 'string' ? f.check(value, field) : undefined;
  return typeof value === 'number' ? f.check(value, field) : undefined;
}

/** JSON equality of two decoded values, total (a value JSON cannot encode only equals itself). */
function sameValue(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return Object.is(a, b);
  }
}

export interface SpecRules {
  readonly schema: z.ZodType;
  readonly owned: Readonly<Record<string, OwnedField>>;
  /** The annotation map's field name (`annotations` in v1, `metadata` in v1beta1), if the kind has one. */
  readonly annotationsField?: string;
  /** Fields that cannot change after creation (compared as JSON values; absence counts as a value). */
  readonly immutable: readonly string[];
}

function specOf(obj: unknown): unknown {
  return isRecord(obj) ? obj.spec : undefined;
}

/**
 * Every rule of a registry spec, total over any input: schema errors from zod, precise errors for
 * owned fields, annotation keys and budget (with reserved-key warnings), and immutability against
 * `oldObj` on update.
 */
export function validateRegistrySpec(
  obj: unknown,
  oldObj: unknown,
  reservedPrefixes: readonly string[],
  rules: SpecRules,
): ValidationResult {
  if (!isRecord(obj))
    return {
      errors: [fieldErrors.typeInvalid('', obj, 'must be an object with apiVersion, kind, metadata and spec')],
      warnings: [],
    };
  // null and "" in optional fields mean unset (common/unset.ts), on both sides of an update.
  const raw = withoutUnset(rules.schema, obj.spec);
  if (raw === undefined || raw === null)
    return { errors: [fieldErrors.required('spec', 'spec is required')], warnings: [] };
  const decoded = decode(rules.schema, raw, ['spec']);
  if (!isRecord(raw)) return { errors: decoded.errors, warnings: [] };

  const spec = FieldPath.root('spec');
  const ownedErrors = new Map<string, FieldError[]>();
  for (const [name, f] of Object.entries(rules.owned)) {
    const field = spec.child(name).toString();
    const found = checkOwned(f, raw[name], field);
    if (found !== undefined) ownedErrors.set(field, found);
  }
  const errors = [...decoded.errors.filter((e) => !ownedErrors.has(e.field)), ...[...ownedErrors.values()].flat()];

  const warnings: string[] = [];
  if (rules.annotationsField !== undefined) {
    const map = raw[rules.annotationsField];
    if (isRecord(map)) {
      // Value types are zod's to report; keys and the budget are checked over the string entries.
      const strings = Object.fromEntries(
        Object.entries(map).filter((e): e is [string, string] => typeof e[1] === 'string'),
      );
      const verdict = validateAnnotations(strings, spec.child(rules.annotationsField), reservedPrefixes);
      errors.push(...verdict.errors);
      warnings.push(...verdict.warnings);
    }
  }

  const oldSpec = withoutUnset(rules.schema, specOf(oldObj));
  if (isRecord(oldSpec)) {
    for (const name of rules.immutable) {
      if (!sameValue(raw[name], oldSpec[name])) {
        errors.push(
          fieldErrors.invalid(
            spec.child(name).toString(),
            raw[name],
            `field is immutable (was ${oldSpec[name] === undefined ? 'unset' : renderValue(oldSpec[name])}): ${IMMUTABLE_DETAIL}`,
          ),
        );
      }
    }
  }
  return { errors, warnings };
}
