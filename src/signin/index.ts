/** The public surface of the sign-in API: what `endpoint-operator run --signin` and tests use. */
export { buildSignInApp, startSignInServer, REDACTED_PATHS } from './server.js';
export type { RunningSignInServer, SignInServerOptions } from './server.js';
export { startKubernetesSignIn } from './kube/start.js';
export type { KubernetesSignInOptions, RunningKubernetesSignIn } from './kube/start.js';
export type { IdentityDirectory } from './directory.js';
export type { SessionStore } from './sessions.js';
export type { SigningKeyStore } from './signing-key.js';
export { IdentityIndex } from './identity-index.js';
export { MemorySessionStore } from './sessions.js';
export { MemorySigningKeyStore } from './signing-key.js';
