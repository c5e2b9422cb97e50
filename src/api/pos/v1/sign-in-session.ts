import { z } from 'zod';
import { fieldErrors, type FieldError } from '../../common/field-error.js';
import type { KindDefinition } from '../../common/kind.js';
import { immutable, validations } from '../../crd/cel.js';
import { ageColumn, basicStatusSchema, dnsSubdomainSchema, POS_CATEGORIES, POS_GROUP } from './common.js';
import { validateSpec } from './validate-spec.js';

/** How many superseded refresh-token hashes a session remembers to recognise a replayed token. */
export const MAX_PREVIOUS_TOKEN_HASHES = 32;

// SHA-256 in base64url without padding: 43 characters.
const TOKEN_HASH_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const RFC3339_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const tokenHashSchema = z
  .string()
  .regex(TOKEN_HASH_PATTERN, { error: 'must be a base64url SHA-256 digest (43 characters)' });

export const REVOKED_REASONS = ['Logout', 'RefreshTokenReuse', 'IdentityRemoved', 'SessionLimit'] as const;
export type RevokedReason = (typeof REVOKED_REASONS)[number];

/** Sessions are rotated, never edited: the operator and the sign-in API write new ones. */
const SESSION_IMMUTABLE_DETAIL = 'a session is never edited; sign in again for a new one';

export const SESSION_PURPOSES = ['refresh', 'shop-selection'] as const;
export type SessionPurpose = (typeof SESSION_PURPOSES)[number];

export const signInSessionSpecSchema = z.object({
  purpose: z.enum(SESSION_PURPOSES).meta({
    description:
      'purpose is refresh (one refresh-token family) or shop-selection (a single-use POS shop selection); required, immutable.',
    ...validations(immutable(SESSION_IMMUTABLE_DETAIL, 'without the old value')),
  }),
  subject: z
    .object({
      kind: z.enum(['ShopUser', 'AdminUser']).meta({ description: 'kind of the signed-in identity; required.' }),
      name: dnsSubdomainSchema.meta({ description: 'name is the metadata.name of the identity; required.' }),
    })
    .meta({
      description: 'subject is the identity the session belongs to; required, immutable.',
      ...validations(immutable(SESSION_IMMUTABLE_DETAIL, 'without the old value')),
    }),
  audience: z.enum(['pos', 'back-office', 'admin']).optional().meta({
    description:
      'audience is the aud of the access tokens of this family (pos, back-office or admin); optional (older families: admin for an AdminUser, else pos).',
  }),
  tokenHash: tokenHashSchema.meta({
    description: 'tokenHash is the SHA-256 of the current refresh token (the token itself is never stored); required.',
  }),
  previousTokenHashes: z
    .array(tokenHashSchema)
    .max(MAX_PREVIOUS_TOKEN_HASHES)
    .default([])
    .meta({
      description: `previousTokenHashes are the hashes of superseded refresh tokens, newest first; presenting one is reuse and revokes the family (at most ${MAX_PREVIOUS_TOKEN_HASHES}); optional.`,
    }),
  expiresAt: z
    .string()
    .regex(RFC3339_PATTERN, { error: 'must be an RFC 3339 timestamp' })
    .meta({ description: 'expiresAt is when the session ends whatever happens (RFC 3339); required.' }),
  revoked: z
    .boolean()
    .default(false)
    .meta({ description: 'revoked is true once the family was logged out or a reused token was seen; optional.' }),
  revokedReason: z
    .enum(REVOKED_REASONS)
    .optional()
    .meta({ description: 'revokedReason says why the session was revoked; optional.' }),
  revokedAt: z.string().regex(RFC3339_PATTERN, { error: 'must be an RFC 3339 timestamp' }).optional().meta({
    description:
      'revokedAt is when the session was revoked (RFC 3339); the record is kept until its access tokens have expired, so every replica keeps refusing them; optional.',
  }),
});
export type SignInSessionSpec = z.infer<typeof signInSessionSpecSchema>;

function sessionRules(spec: SignInSessionSpec): FieldError[] {
  const errors: FieldError[] = [];
  if (Number.isNaN(Date.parse(spec.expiresAt)))
    errors.push(fieldErrors.invalid('spec.expiresAt', spec.expiresAt, 'must be a valid date and time'));
  if (spec.revokedReason !== undefined && !spec.revoked)
    errors.push(fieldErrors.forbidden('spec.revokedReason', 'may only be set when spec.revoked is true'));
  if (spec.revokedAt !== undefined && !spec.revoked)
    errors.push(fieldErrors.forbidden('spec.revokedAt', 'may only be set when spec.revoked is true'));
  if (spec.revokedAt !== undefined && Number.isNaN(Date.parse(spec.revokedAt)))
    errors.push(fieldErrors.invalid('spec.revokedAt', spec.revokedAt, 'must be a valid date and time'));
  const i = spec.previousTokenHashes.indexOf(spec.tokenHash);
  if (i >= 0)
    errors.push(
      fieldErrors.invalid(`spec.previousTokenHashes[${i}]`, spec.tokenHash, 'must not repeat spec.tokenHash'),
    );
  return errors;
}

export const signInSessionKind: KindDefinition = {
  group: POS_GROUP,
  kind: 'SignInSession',
  listKind: 'SignInSessionList',
  plural: 'signinsessions',
  singular: 'signinsession',
  shortNames: [],
  categories: POS_CATEGORIES,
  description:
    'SignInSession is internal to the sign-in API: one refresh-token family or one pending POS shop selection, stored as hashes only.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: signInSessionSpecSchema,
      status: basicStatusSchema('SignInSession'),
      printerColumns: [
        { name: 'Purpose', type: 'string', jsonPath: '.spec.purpose' },
        { name: 'Subject', type: 'string', jsonPath: '.spec.subject.name' },
        { name: 'Revoked', type: 'boolean', jsonPath: '.spec.revoked' },
        { name: 'Expires', type: 'string', jsonPath: '.spec.expiresAt' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status', priority: 1 },
        { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason', priority: 1 },
        ageColumn,
      ],
      validate: (obj) => validateSpec(obj, signInSessionSpecSchema, sessionRules),
    },
  ],
};
