import { z } from 'zod';
import type { KindDefinition } from '../../common/kind.js';
import {
  ACCOUNT_STATUSES,
  ADMIN_ROLES,
  ageColumn,
  basicStatusSchema,
  emailErrors,
  emailSchema,
  POS_CATEGORIES,
  POS_GROUP,
  readyColumns,
  secretKeySelectorSchema,
} from './common.js';
import { validateSpec } from './validate-spec.js';

export const adminUserSpecSchema = z.object({
  email: emailSchema.meta({
    description:
      'email is the sign-in name, lowercase, unique among ShopUsers and AdminUsers of the namespace; required.',
  }),
  name: z
    .string()
    .min(1)
    .max(128)
    .meta({ description: 'name is the full name of the administrator (1-128 characters); required.' }),
  role: z.enum(ADMIN_ROLES).meta({
    description:
      'role is superadmin (manages admins), admin (manages shops and users) or support (read only); required.',
  }),
  status: z
    .enum(ACCOUNT_STATUSES)
    .default('active')
    .meta({ description: 'status is active or disabled; optional, default active.' }),
  passwordSecretRef: secretKeySelectorSchema,
});
export type AdminUserSpec = z.infer<typeof adminUserSpecSchema>;

export const adminUserKind: KindDefinition = {
  group: POS_GROUP,
  kind: 'AdminUser',
  listKind: 'AdminUserList',
  plural: 'adminusers',
  singular: 'adminuser',
  shortNames: ['au'],
  categories: POS_CATEGORIES,
  description: 'AdminUser is an administrator of the point-of-sale platform who signs in at /auth/admin/login.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: adminUserSpecSchema,
      status: basicStatusSchema('AdminUser'),
      printerColumns: [
        { name: 'Email', type: 'string', jsonPath: '.spec.email' },
        { name: 'Role', type: 'string', jsonPath: '.spec.role' },
        { name: 'Status', type: 'string', jsonPath: '.spec.status' },
        ...readyColumns,
        ageColumn,
      ],
      validate: (obj) => validateSpec(obj, adminUserSpecSchema, (spec) => emailErrors('spec.email', spec.email)),
    },
  ],
};
