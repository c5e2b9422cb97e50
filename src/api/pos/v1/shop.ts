import { z } from 'zod';
import type { KindDefinition } from '../../common/kind.js';
import { ageColumn, basicStatusSchema, POS_CATEGORIES, POS_GROUP, readyColumns } from './common.js';
import { validateSpec } from './validate-spec.js';

// Till receipts print the code, so it is short and unambiguous: upper-case letters, digits and '-'.
const SHOP_CODE_PATTERN = /^[A-Z0-9]([A-Z0-9-]{0,14}[A-Z0-9])?$/;

export const shopSpecSchema = z.object({
  displayName: z.string().min(1).max(128).meta({
    description: 'displayName is the name shown to cashiers and on receipts (1-128 characters, any UTF-8); required.',
  }),
  code: z
    .string()
    .min(1)
    .max(16)
    .regex(SHOP_CODE_PATTERN, {
      error:
        "must be 1-16 upper-case letters, digits or '-', starting and ending with a letter or digit (for example LIS-001)",
    })
    .meta({ description: 'code is the short shop code printed on receipts (1-16 of A-Z, 0-9, -); required.' }),
});
export type ShopSpec = z.infer<typeof shopSpecSchema>;

export const shopStatusSchema = basicStatusSchema('Shop');

export const shopKind: KindDefinition = {
  group: POS_GROUP,
  kind: 'Shop',
  listKind: 'ShopList',
  plural: 'shops',
  singular: 'shop',
  shortNames: ['shop'],
  categories: POS_CATEGORIES,
  description:
    'Shop is a point-of-sale shop that shop users sign in to; its metadata.name is the shop id used by the sign-in API.',
  versions: [
    {
      name: 'v1',
      served: true,
      storage: true,
      spec: shopSpecSchema,
      status: shopStatusSchema,
      printerColumns: [
        { name: 'Code', type: 'string', jsonPath: '.spec.code' },
        { name: 'Display Name', type: 'string', jsonPath: '.spec.displayName' },
        ...readyColumns,
        ageColumn,
      ],
      validate: (obj) => validateSpec(obj, shopSpecSchema, () => []),
    },
  ],
};
