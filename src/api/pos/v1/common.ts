import { z } from 'zod';
import { fieldErrors, type FieldError } from '../../common/field-error.js';
import { conditionsSchema, type ConditionKind } from '../../common/conditions.js';
import type { PrinterColumn } from '../../common/kind.js';
import { celPattern, validations } from '../../crd/cel.js';

export const POS_GROUP = 'pos.endpoint-operator.dev';
export const POS_CATEGORIES = ['endpoint-operator'] as const;

/** Shop roles, weakest last: an owner runs the shop, a manager runs a till team, a cashier sells. */
export const SHOP_ROLES = ['owner', 'manager', 'cashier'] as const;
export type ShopRole = (typeof SHOP_ROLES)[number];

/** Admin roles: superadmin manages admins, admin manages shops and users, support only reads. */
export const ADMIN_ROLES = ['superadmin', 'admin', 'support'] as const;
export type AdminRole = (typeof ADMIN_ROLES)[number];

export const ACCOUNT_STATUSES = ['active', 'disabled'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

// RFC 5321 §4.5.3.1: local part ≤64 octets, domain ≤255, and a path ≤256 (so an address ≤254 once the
// angle brackets are counted). The pattern is RE2-compatible; the validator adds the case rule.
const EMAIL_PATTERN = /^[^@\s]{1,64}@[^@\s]{1,253}$/;
const DNS1123_SUBDOMAIN_PATTERN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
// A Secret data key (IsConfigMapKey): alphanumerics, '-', '_' and '.'.
const SECRET_KEY_PATTERN = /^[-._a-zA-Z0-9]+$/;

/** A dotted domain of labels of 1 to 63 characters after the last '@' (the case rule is a rule of its own). */
const EMAIL_DOTTED_DOMAIN = /@[^@\s.]{1,63}(\.[^@\s.]{1,63})+$/;

export const emailSchema = z
  .string()
  .min(3)
  .max(254)
  .regex(EMAIL_PATTERN, {
    error: 'must be an email address local@domain (local part at most 64 characters, no spaces)',
  })
  .meta(
    validations(
      {
        rule: 'self == self.lowerAscii()',
        message: 'must be lowercase so that one address names one identity',
      },
      {
        rule: `self.matches(${celPattern(EMAIL_DOTTED_DOMAIN)})`,
        message: 'the domain must be a dotted DNS name with labels of 1 to 63 characters (for example example.com)',
      },
    ),
  );

export const dnsSubdomainSchema = z.string().min(1).max(253).regex(DNS1123_SUBDOMAIN_PATTERN, {
  error: "must be a lowercase RFC 1123 subdomain (lowercase alphanumerics, '-' or '.', alphanumeric at both ends)",
});

export const secretKeySelectorSchema = z
  .object({
    name: dnsSubdomainSchema.meta({ description: 'name is the name of a Secret in the same namespace; required.' }),
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(SECRET_KEY_PATTERN, { error: "must consist of alphanumerics, '-', '_' or '.'" })
      .meta({
        description:
          'key is the data key holding the argon2id PHC string (made by `endpoint-operator hash-password`); required.',
      }),
  })
  .meta({ description: 'passwordSecretRef names the Secret key holding the argon2id password hash; required.' });
export type SecretKeySelector = z.infer<typeof secretKeySelectorSchema>;

/** `status` of a POS kind: observedGeneration and the kind's conditions. */
export function basicStatusSchema(kind: ConditionKind) {
  return z.object({
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'observedGeneration is the metadata.generation last processed.' }),
    conditions: conditionsSchema(kind),
  });
}

export const readyColumns: readonly PrinterColumn[] = [
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
];
export const ageColumn: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** The email rules a JSON schema cannot carry: lowercase (so one address is one identity) and a dotted domain. */
export function emailErrors(field: string, email: string): FieldError[] {
  const errors: FieldError[] = [];
  if (email !== email.toLowerCase()) {
    errors.push(
      fieldErrors.invalid(
        field,
        email,
        `must be lowercase (write ${JSON.stringify(email.toLowerCase())}) so that one address names one identity`,
      ),
    );
  }
  const domain = email.slice(email.lastIndexOf('@') + 1);
  const labels = domain.split('.');
  if (labels.length < 2 || labels.some((l) => l.length === 0 || l.length > 63)) {
    errors.push(
      fieldErrors.invalid(
        field,
        email,
        'the domain must be a dotted DNS name with labels of 1 to 63 characters (for example example.com)',
      ),
    );
  }
  return errors;
}
