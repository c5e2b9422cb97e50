import { z } from 'zod';
import { fieldErrors, type FieldError } from '../../common/field-error.js';
import type { KindDefinition } from '../../common/kind.js';
import {
  ageColumn,
  ACCOUNT_STATUSES,
  basicStatusSchema,
  dnsSubdomainSchema,
  emailErrors,
  emailSchema,
  POS_CATEGORIES,
  POS_GROUP,
  readyColumns,
  secretKeySelectorSchema,
  SHOP_ROLES,
} from './common.js';
import { validateSpec } from './validate-spec.js';

export const MAX_MEMBERSHIPS = 100;

export const membershipProfileSchema = z
  .object({
    displayName: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .meta({ description: "displayName overrides the user's displayName in this shop (1-128 characters); optional." }),
    employeeCode: z.string().min(1).max(32).optional().meta({
      description: 'employeeCode is the staff number in this shop, printed on receipts (1-32 characters); optional.',
    }),
  })
  .meta({ description: 'profile is the per-shop profile of the user; optional.' });

export const membershipSchema = z.object({
  shop: dnsSubdomainSchema.meta({
    description: 'shop is the metadata.name of a Shop in the same namespace; required, unique within memberships.',
  }),
  role: z.enum(SHOP_ROLES).meta({ description: 'role in this shop: owner, manager or cashier; required.' }),
  profile: membershipProfileSchema.optional(),
});
export type Membership = z.infer<typeof membershipSchema>;

export const shopUserSpecSchema = z.object({
  email: emailSchema.meta({
    description:
      'email is the sign-in name, lowercase, unique among ShopUsers and AdminUsers of the namespace; required.',
  }),
  displayName: z
    .string()
    .min(1)
    .max(128)
    .meta({ description: 'displayName is the name shown on the till (1-128 characters); required.' }),
  status: z.enum(ACCOUNT_STATUSES).default('active').meta({
    description:
      'status is active or disabled; a disabled user cannot sign in and loses access at the next request; optional, default active.',
  }),
  passwordSecretRef: secretKeySelectorSchema,
  memberships: z
    .array(membershipSchema)
    .max(MAX_MEMBERSHIPS)
    .default([])
    .meta({
      description: `memberships are the shops the user works in, with a role and a per-shop profile (at most ${MAX_MEMBERSHIPS}), one per shop; optional.`,
      // A map keyed by shop: the apiserver refuses a repeated shop, and server-side apply merges per shop.
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['shop'],
    }),
});
export type ShopUserSpec = z.infer<typeof shopUserSpecSchema>;

export const shopUserStatusSchema = basicStatusSchema('ShopUser');

function shopUserRules(spec: ShopUserSpec): FieldError[] {
  const errors = emailErrors('spec.email', spec.email);
  const seen = new Map<string, number>();
  spec.memberships.forEach((m, i) => {
    const first = seen.get(m.shop);
    if (first === undefined) seen.set(m.shop, i);
    else
      errors.push(
        fieldErrors.duplicate(
          `spec.memberships[${i}].shop`,
          m.shop,
          `shop ${JSON.stringify(m.shop)} is already listed at spec.memberships[${first}]; a user has one role per shop`,
        ),
      );
  });
  return errors;
}

export const shopUserKind: KindDefinition = {
  group: POS_GROUP,
  kind: 'ShopUser',
  listKind: 'ShopUserList',
  plural: 'shopusers',
  singular: 'shopuser',
  shortNames: ['su'],
  categories: POS_CATEGORIES,
  description:
    'ShopUser is a person who signs in to the point of sale of one or more shops; the password hash lives in a Secret.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: shopUserSpecSchema,
      status: shopUserStatusSchema,
      printerColumns: [
        { name: 'Email', type: 'string', jsonPath: '.spec.email' },
        { name: 'Status', type: 'string', jsonPath: '.spec.status' },
        ...readyColumns,
        ageColumn,
      ],
      validate: (obj) => validateSpec(obj, shopUserSpecSchema, shopUserRules),
    },
  ],
};
