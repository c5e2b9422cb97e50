import type { AdminUserEntry, MembershipEntry, ShopEntry, ShopUserEntry, Identity } from './directory.js';
import type { AdminUserDto, ShopListItemDto, ShopUserDetailDto } from './dto.js';

export function shopListItem(shop: ShopEntry): ShopListItemDto {
  return { id: shop.id, name: shop.name, code: shop.code };
}

export function shopUserDetail(user: ShopUserEntry, membership: MembershipEntry, shop: ShopEntry): ShopUserDetailDto {
  return {
    id: user.id,
    email: user.email,
    displayName: membership.displayName ?? user.displayName,
    role: membership.role,
    shop: shopListItem(shop),
    employeeCode: membership.employeeCode ?? null,
  };
}

export function adminUserDto(admin: AdminUserEntry): AdminUserDto {
  return { id: admin.id, email: admin.email, name: admin.name, role: admin.role };
}

export const isShopUser = (i: Identity): i is ShopUserEntry => i.kind === 'ShopUser';
export const isAdminUser = (i: Identity): i is AdminUserEntry => i.kind === 'AdminUser';
