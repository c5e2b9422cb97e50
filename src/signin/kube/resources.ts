import type { ResourceRef } from '../../api/common/kube-object.js';
import { POS_GROUP } from '../../api/pos/v1/index.js';

const pos = (plural: string): ResourceRef => ({ group: POS_GROUP, version: 'v1', plural, namespaced: true });

export const posResources = {
  shops: pos('shops'),
  shopUsers: pos('shopusers'),
  adminUsers: pos('adminusers'),
  signInSessions: pos('signinsessions'),
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
} as const satisfies Record<string, ResourceRef>;

export const SIGNIN_FIELD_MANAGER = 'endpoint-operator-signin';
