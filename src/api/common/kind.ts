import type { z } from 'zod';
import type { ValidationResult } from './field-error.js';

/**
 * Operator settings that validation depends on. Pure validators take them as an argument
 * (never read globals or the environment) so that the CRD, the webhook, the reconciler and
 * `endpoint-operator validate` agree.
 */
export interface ValidationOptions {
  /**
   * Annotation/metadata key prefixes whose keys are accepted, kept in spec, but ignored:
   * left out of the effective set and the 512-character budget, and named in a warning.
   * A prefix also covers every subdomain of itself (`x.endpoint-operator.dev/`).
   */
  readonly reservedPrefixes: readonly string[];
}

export const DEFAULT_RESERVED_PREFIXES: readonly string[] = ['endpoint-operator.dev', 'endpoint-operator.io'];

export const defaultValidationOptions: ValidationOptions = { reservedPrefixes: DEFAULT_RESERVED_PREFIXES };

/** An `additionalPrinterColumns` entry of a CRD version. */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly priority?: number;
}

/** One served version of a kind: its schema, columns and validator. */
export interface KindVersion {
  /** `v1`, `v1beta1`. */
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  /** zod schema of `spec`; field docs and CRD-only metadata (CEL rules) are attached with `.meta()`. */
  readonly spec: z.ZodType;
  /** zod schema of `status` (output-only fields). */
  readonly status: z.ZodType;
  readonly printerColumns: readonly PrinterColumn[];
  /**
   * Every rule of this version, pure and total: `(object, oldObject?) → errors + warnings`.
   * `obj` is the whole object as received (apiVersion, kind, metadata, spec, status) and may be
   * anything at all; `oldObj` is the stored object on UPDATE. Never throws.
   */
  validate(obj: unknown, oldObj: unknown, options: ValidationOptions): ValidationResult;
  /**
   * What to say about a field this version does not have but a user may well write (another
   * version's name for it), keyed by path: `{ 'spec.metadata': 'v1 calls it spec.annotations' }`.
   */
  readonly unknownFieldHints?: Readonly<Record<string, string>>;
}

/** Everything the CRD generator, the webhook, the validate CLI and the controllers need to know about a kind. */
export interface KindDefinition {
  /** `prediction.endpoint-operator.dev`. */
  readonly group: string;
  readonly kind: string;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  /** A sentence for `kubectl explain <kind>`. */
  readonly description: string;
  readonly versions: readonly KindVersion[];
  /** `Cluster` for a kind with no namespace (the bucket map); default `Namespaced`. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /**
   * The finalizer that holds a deletion of this kind until the operator has cleaned up (undeployed).
   * The mutating webhook sets it at creation; the controller adds it when the webhook was bypassed.
   */
  readonly finalizer?: string;
}

export function storageVersion(def: KindDefinition): KindVersion {
  const v = def.versions.find((x) => x.storage);
  if (!v) throw new Error(`${def.kind} has no storage version`);
  return v;
}
