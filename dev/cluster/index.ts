/**
 * The project's own local Kubernetes cluster: etcd, kube-apiserver, kube-controller-manager and kube-scheduler
 * of a supported release built from the Go module proxy, with Nodes simulated by kwok, used by the integration
 * tests, `endpoint-operator-dev cluster up` and `npm start`.
 */
export { startControlPlane } from './control-plane.js';
export type { ControlPlane, StartControlPlaneOptions } from './control-plane.js';
export type { TokenUser } from './credentials.js';
export { ensureClusterBinaries, RELEASES, selectedRelease } from './binaries.js';
export type { ClusterBinaries, KubernetesRelease } from './binaries.js';
export type { ModelHost } from './network.js';
export { listenInModelHost } from './model-host.js';
export { ControlPlaneError } from '../host/errors.js';
export { cacheRoot } from '../host/paths.js';
