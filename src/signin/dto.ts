import { z } from 'zod';
import { ADMIN_ROLES, SHOP_ROLES } from '../api/pos/v1/index.js';

/**
 * Request and response bodies of the sign-in API. These zod schemas are the single source: they
 * validate requests, drive fastify's response serialisation (unknown fields never leak out) and
 * produce /openapi.json. A schema with an `id` (zod's global registry, where its field descriptions
 * live too) is an OpenAPI component that routes reference.
 */

// Bounds stop a multi-megabyte password from turning argon2 into a CPU sink (argon2 pre-hashes, but
// the request still has to be read and copied) and keep junk out of logs and throttling keys.
export const credentialsRequest = z
  .object({
    email: z
      .string()
      .min(1)
      .max(254)
      .meta({ description: 'email of the account (compared case-insensitively); required.' }),
    password: z.string().min(1).max(1024).meta({ description: 'password; required, never logged.' }),
  })
  .meta({ id: 'CredentialsRequest' });

export const selectShopRequest = z
  .object({
    sessionToken: z
      .string()
      .min(1)
      .max(4096)
      .meta({ description: 'sessionToken from a select_shop PosLoginResponse (single use, 5 minutes); required.' }),
    shopId: z.string().min(1).max(253).meta({ description: 'shopId is the id of one of the offered shops; required.' }),
  })
  .meta({ id: 'SelectShopRequest' });

export const switchShopRequest = z
  .object({
    shopId: z
      .string()
      .min(1)
      .max(253)
      .meta({ description: 'shopId is the id of a shop the user is attached to; required.' }),
  })
  .meta({ id: 'SwitchShopRequest' });

export const refreshTokenRequest = z
  .object({
    refreshToken: z
      .string()
      .min(1)
      .max(512)
      .meta({ description: 'refreshToken from the last login or refresh (it rotates on every use); required.' }),
  })
  .meta({ id: 'RefreshTokenRequest' });

export const shopListItemDto = z
  .object({
    id: z.string().meta({ description: 'id of the shop (the Shop metadata.name); the value of X-Shop-Id.' }),
    name: z.string().meta({ description: 'name is the display name of the shop.' }),
    code: z.string().meta({ description: 'code is the short shop code printed on receipts.' }),
  })
  .meta({ id: 'ShopListItemDto' });
export type ShopListItemDto = z.infer<typeof shopListItemDto>;

export const shopUserDetailDto = z
  .object({
    id: z.string().meta({ description: 'id of the user (the ShopUser metadata.name).' }),
    email: z.string(),
    displayName: z
      .string()
      .meta({ description: 'displayName in this shop: the membership profile name, else the user name.' }),
    role: z.enum(SHOP_ROLES).meta({ description: 'role of the user in this shop.' }),
    shop: shopListItemDto,
    employeeCode: z.string().nullable().meta({ description: 'employeeCode in this shop, or null.' }),
  })
  .meta({ id: 'ShopUserDetailDto' });
export type ShopUserDetailDto = z.infer<typeof shopUserDetailDto>;

export const adminUserDto = z
  .object({ id: z.string(), email: z.string(), name: z.string(), role: z.enum(ADMIN_ROLES) })
  .meta({ id: 'AdminUserDto' });
export type AdminUserDto = z.infer<typeof adminUserDto>;

const tokenFields = {
  accessToken: z
    .string()
    .meta({ description: 'accessToken: an EdDSA JWT (typ at+jwt), sent as Authorization: Bearer.' }),
  refreshToken: z
    .string()
    .meta({ description: 'refreshToken: opaque, single use; POST it to /auth/refresh for a new pair.' }),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().meta({ description: 'expiresIn: access-token lifetime in seconds.' }),
};

export const tokenResponse = z.object(tokenFields).meta({ id: 'TokenResponse' });
export type TokenResponse = z.infer<typeof tokenResponse>;

export const adminLoginResponse = z.object({ ...tokenFields, user: adminUserDto }).meta({ id: 'AdminLoginResponse' });

/**
 * Back-office sign-in of a shop user (the seed's ShopUserLoginResponse): the profile on the first
 * shop, in declaration order, where the user is owner or manager.
 */
export const shopUserLoginResponse = z
  .object({ ...tokenFields, shopUser: shopUserDetailDto })
  .meta({ description: 'shopUser is the profile on the first shop the user runs (owner or manager role).' })
  .meta({ id: 'ShopUserLoginResponse' });

export const posAuthenticatedResponse = z
  .object({ status: z.literal('authenticated'), ...tokenFields, shopUser: shopUserDetailDto })
  .meta({ id: 'PosAuthenticatedResponse' });
export type PosAuthenticatedResponse = z.infer<typeof posAuthenticatedResponse>;

export const posSelectShopResponse = z
  .object({
    status: z.literal('select_shop'),
    sessionToken: z
      .string()
      .meta({ description: 'sessionToken: single use, only at POST /auth/pos/select-shop; never an access token.' }),
    expiresIn: z.number().int().meta({ description: 'expiresIn: sessionToken lifetime in seconds.' }),
    shops: z.array(shopListItemDto),
  })
  .meta({ id: 'PosSelectShopResponse' });

export const posLoginResponse = z
  .discriminatedUnion('status', [posAuthenticatedResponse, posSelectShopResponse])
  .meta({ id: 'PosLoginResponse' });
export type PosLoginResponse = z.infer<typeof posLoginResponse>;

export const posProfileResponse = z
  .object({
    shopUser: shopUserDetailDto,
    availableShops: z
      .array(shopListItemDto)
      .meta({ description: 'availableShops: every shop the user is attached to (the shops it may switch to).' }),
  })
  .meta({ description: 'The profile on the shop named by X-Shop-Id.' })
  .meta({ id: 'PosProfileResponse' });

export const switchShopResponse = z
  .object({ shopUser: shopUserDetailDto })
  .meta({
    description: 'The profile in the new shop; no token: the access token is shop-agnostic, send the new X-Shop-Id.',
  })
  .meta({ id: 'SwitchShopResponse' });

export const jwksResponse = z
  .object({
    keys: z.array(
      z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.string() }),
    ),
  })
  .meta({ id: 'JsonWebKeySet' });

export const problemDetails = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    instance: z.string().optional(),
    errors: z.array(z.object({ field: z.string(), detail: z.string() })).optional(),
  })
  .meta({ description: 'RFC 9457 problem details.' })
  .meta({ id: 'Problem' });
