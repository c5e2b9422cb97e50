import type { ResourceRef } from '../../api/common/kube-object.js';
import { POS_GROUP } from '../../api/pos/v1/index.js';
import { signInKindBindings } from '../../api/kind-bindings.js';

const pos = (plural: string): ResourceRef => ({ group: POS_GROUP, version: 'v1', plural, namespaced: true });

export const posResources = {
  shops: signInKindBindings.shops.resource,
  shopUsers: signInKindBindings.shopUsers.resource,
  adminUsers: signInKindBindings.adminUsers.resource,
  signInSessions: pos('signinsessions'),
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
} as const satisfies Record<string, ResourceRef>;

export const SIGNIN_FIELD_MANAGER = 'endpoint-operator-signin';
