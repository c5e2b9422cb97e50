export * from './common.js';
export * from './shop.js';
export * from './shop-user.js';
export * from './admin-user.js';
export * from './sign-in-session.js';

import { adminUserKind } from './admin-user.js';
import { shopKind } from './shop.js';
import { shopUserKind } from './shop-user.js';
import { signInSessionKind } from './sign-in-session.js';
import type { KindDefinition } from '../../common/kind.js';

export const posKinds: readonly KindDefinition[] = [shopKind, shopUserKind, adminUserKind, signInSessionKind];
