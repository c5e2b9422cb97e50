import { formatFieldError } from '../api/common/field-error.js';
import type { KindDefinition } from '../api/common/kind.js';
import {
  Reasons,
  type AdminUserReason,
  type ReadyVerdict,
  type ShopReason,
  type ShopUserReason,
} from '../api/common/conditions.js';
import { adminUserKind, shopKind, shopUserKind, type SecretKeySelector } from '../api/pos/v1/index.js';
import type { IdentityDirectory } from './directory.js';
import { meetsMinimum, parsePhc, PASSWORD_SECRET_LABEL } from './passwords.js';
import type { SubjectKind } from './tokens.js';

/** The Ready verdict of a ShopUser or AdminUser (the reasons are the catalogue's, src/api/common/conditions.ts). */
export type IdentityVerdict = ReadyVerdict<ShopUserReason | AdminUserReason>;

const ready: IdentityVerdict = { status: 'True', reason: Reasons.Reconciled, message: 'the account can sign in' };

function invalid(kind: KindDefinition, obj: unknown): ReadyVerdict<typeof Reasons.InvalidSpec> | undefined {
  const [version] = kind.versions;
  const result = version?.validate(obj, undefined, { reservedPrefixes: [] });
  if (!result || result.errors.length === 0) return undefined;
  return { status: 'False', reason: Reasons.InvalidSpec, message: result.errors.map(formatFieldError).join('; ') };
}

function passwordVerdict(directory: IdentityDirectory, ref: SecretKeySelector): IdentityVerdict | undefined {
  const phc = directory.passwordHash(ref);
  if (phc === undefined) {
    return {
      status: 'False',
      reason: Reasons.SecretNotFound,
      message: `spec.passwordSecretRef: Secret ${JSON.stringify(ref.name)} with key ${JSON.stringify(ref.key)} not found (the sign-in API reads only Secrets labelled ${PASSWORD_SECRET_LABEL}=true); create it with \`endpoint-operator hash-password --secret ${ref.name} --key ${ref.key}\``,
    };
  }
  const params = parsePhc(phc);
  if (!params || !meetsMinimum(params)) {
    return {
      status: 'False',
      reason: Reasons.InvalidPasswordHash,
      message: `spec.passwordSecretRef: Secret ${JSON.stringify(ref.name)} key ${JSON.stringify(ref.key)} is not an argon2id PHC string at OWASP's minimum (m=19456 KiB with t=2, or an equivalent); regenerate it with \`endpoint-operator hash-password\``,
    };
  }
  return undefined;
}

/** Ready for a ShopUser or AdminUser object: spec rules, then email uniqueness, then the password Secret, then shops. */
export function identityVerdict(
  directory: IdentityDirectory,
  kind: SubjectKind,
  obj: { metadata: { name?: string }; spec?: unknown },
): IdentityVerdict {
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
      reason: Reasons.DuplicateEmail,
      message: `spec.email: ${JSON.stringify(spec.email)} is also the email of ${others.join(', ') || 'another identity'}; neither can sign in until each has its own email`,
    };
  }
  const pw = passwordVerdict(directory, spec.passwordSecretRef);
  if (pw) return pw;
  const missing = (spec.memberships ?? [])
    .map((m, i) => ({ i, shop: m.shop }))
    .filter((m) => directory.shop(m.shop) === undefined);
  if (missing.length > 0) {
    return {
      status: 'False',
      reason: Reasons.ShopNotFound,
      message:
        missing.map((m) => `spec.memberships[${m.i}].shop: Shop ${JSON.stringify(m.shop)} not found`).join('; ') +
        '; create the Shop or remove the membership (other shops still work)',
    };
  }
  return ready;
}

export function shopVerdict(obj: unknown): ReadyVerdict<ShopReason> {
  return invalid(shopKind, obj) ?? { status: 'True', reason: Reasons.Reconciled, message: 'the shop accepts sign-ins' };
}
