/**
 * The project's own local Kubernetes control plane: a real etcd and a real kube-apiserver v1.20.2 on
 * loopback, used by the integration tests, `endpoint-operator cluster up` and `endpoint-operator dev`.
 */
export { startControlPlane } from './control-plane.js';
export type { ControlPlane, StartControlPlaneOptions } from './control-plane.js';
export type { TokenUser } from './credentials.js';
export { ensureKubeApiserver, KUBE_VERSION } from './kube-apiserver.js';
export { findKubectl } from './apt.js';
export { ControlPlaneError } from './errors.js';
export { cacheRoot } from './paths.js';
