import { formatFieldError } from '../api/common/field-error.js';
import type { KindDefinition } from '../api/common/kind.js';
import { adminUserKind, PosReasons, shopKind, shopUserKind, type SecretKeySelector } from '../api/pos/v1/index.js';
import type { IdentityDirectory } from './directory.js';
import { meetsMinimum, parsePhc, PASSWORD_SECRET_LABEL } from './passwords.js';
import type { SubjectKind } from './tokens.js';

/** The Ready condition a POS object should carry, as computed from the directory. */
export interface ReadyVerdict {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

export const IdentityReasons = {
  ...PosReasons,
  /** The password Secret or key is missing, or does not hold a strong-enough argon2id PHC string. */
  SecretNotFound: 'SecretNotFound',
  InvalidPasswordHash: 'InvalidPasswordHash',
  /** A membership names a Shop that does not exist (yet): GitOps may apply the Shop later. */
  ShopNotFound: 'ShopNotFound',
} as const;

const ready: ReadyVerdict = { status: 'True', reason: PosReasons.Reconciled, message: 'the account can sign in' };

function invalid(kind: KindDefinition, obj: unknown): ReadyVerdict | undefined {
  const [version] = kind.versions;
  const result = version?.validate(obj, undefined, { reservedPrefixes: [] });
  if (!result || result.errors.length === 0) return undefined;
  return { status: 'False', reason: PosReasons.InvalidSpec, message: result.errors.map(formatFieldError).join('; ') };
}

function passwordVerdict(directory: IdentityDirectory, ref: SecretKeySelector): ReadyVerdict | undefined {
  const phc = directory.passwordHash(ref);
  if (phc === undefined) {
    return { status: 'False', reason: IdentityReasons.SecretNotFound, message: `spec.passwordSecretRef: Secret ${JSON.stringify(ref.name)} with key ${JSON.stringify(ref.key)} not found (the sign-in API reads only Secrets labelled ${PASSWORD_SECRET_LABEL}=true); create it with \`endpoint-operator hash-password --secret ${ref.name} --key ${ref.key}\`` };
  }
  const params = parsePhc(phc);
  if (!params || !meetsMinimum(params)) {
    return { status: 'False', reason: IdentityReasons.InvalidPasswordHash, message: `spec.passwordSecretRef: Secret ${JSON.stringify(ref.name)} key ${JSON.stringify(ref.key)} is not an argon2id PHC string at OWASP's minimum (m=19456 KiB with t=2, or an equivalent); regenerate it with \`endpoint-operator hash-password\`` };
  }
  return undefined;
}

/** Ready for a ShopUser or AdminUser object: spec rules, then email uniqueness, then the password Secret, then shops. */
export function identityVerdict(directory: IdentityDirectory, kind: SubjectKind, obj: { metadata: { name?: string }; spec?: unknown }): ReadyVerdict {
  const bad = invalid(kind === 'ShopUser' ? shopUserKind : adminUserKind, obj);
  if (bad) return bad;
  const name = obj.metadata.name ?? '';
  const identity = directory.identity({ kind, name });
  const spec = obj.spec as { email: string; passwordSecretRef: SecretKeySelector; memberships?: { shop: string }[] };
  if (!identity) {
    const holders = directory.duplicateEmails().get(spec.email.toLowerCase()) ?? [];
    const others = holders.filter((h) => !(h.kind === kind && h.name === name)).map((h) => `${h.kind}/${h.name}`);
    return {
      status: 'False',
      reason: PosReasons.DuplicateEmail,
      message: `spec.email: ${JSON.stringify(spec.email)} is also the email of ${others.join(', ') || 'another identity'}; neither can sign in until each has its own email`,
    };
  }
  const pw = passwordVerdict(directory, spec.passwordSecretRef);
  if (pw) return pw;
  const missing = (spec.memberships ?? []).map((m, i) => ({ i, shop: m.shop })).filter((m) => directory.shop(m.shop) === undefined);
  if (missing.length > 0) {
    return {
      status: 'False',
      reason: IdentityReasons.ShopNotFound,
      message: missing.map((m) => `spec.memberships[${m.i}].shop: Shop ${JSON.stringify(m.shop)} not found`).join('; ') + '; create the Shop or remove the membership (other shops still work)',
    };
  }
  return ready;
}

export function shopVerdict(obj: unknown): ReadyVerdict {
  return invalid(shopKind, obj) ?? { status: 'True', reason: PosReasons.Reconciled, message: 'the shop accepts sign-ins' };
}
