/**
 * The gateway's CA, published where its clients run, as kube-root-ca.crt publishes the cluster's: a ConfigMap
 * `endpoint-operator-gateway-ca.crt` with key `ca.crt` in every namespace that has a PredictionEndpoint or a
 * RegistryService (a pod mounts it, or `kubectl get configmap … -o jsonpath='{.data.ca\.crt}'` reads it), kept
 * equal to the `ca.crt` of the gateway's certificate Secret: the operator's own (gateway-certificate.ts) or one
 * cert-manager writes. During a CA rotation that `ca.crt` holds the new CA and the old one, so clients that
 * re-read it trust the gateway before and after its certificate changes.
 *
 * A namespace whose last PredictionEndpoint and RegistryService are gone loses the ConfigMap (only one this
 * operator labels as its own): nothing there calls the gateway any more, and an operator's objects should not
 * outlive the reason for them. Unlike kube-root-ca.crt it is not in every namespace: most have no client.
 */
import { Controller, Action, type ReconcileRequest, type ReconcileResult } from '../runtime/controller.js';
import { Informer, kubeListerWatcher } from '../kube/informer.js';
import type { KubeClient } from '../kube/kube-client.js';
import { coreResources, objectKey, type KubeObject } from '../api/common/kube-object.js';
import type { Logger } from '../base/logger.js';
import type { Informers } from '../reconcilers/context.js';
import { secretValue, SECRETS, type SecretObject } from '../webhook/certificate-secret.js';

export const GATEWAY_CA_CONFIGMAP = 'endpoint-operator-gateway-ca.crt';
export const GATEWAY_CA_KEY = 'ca.crt';
const FIELD_MANAGER = 'endpoint-operator-gateway-ca';
const MANAGED_LABELS = {
  'app.kubernetes.io/managed-by': 'endpoint-operator',
  'app.kubernetes.io/component': 'gateway-ca',
};

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** The CA to publish: the `ca.crt` of one Secret, followed by an informer on that Secret alone. */
export interface GatewayCaSource {
  readonly informer: Informer;
  /** PEM; undefined while the Secret, or its `ca.crt`, is not there. */
  ca(): string | undefined;
}

export function gatewayCaSource(
  client: KubeClient,
  secret: { readonly namespace: string; readonly name: string },
  log: Logger,
): GatewayCaSource {
  // A metadata.name field selector: RBAC's resourceNames also covers list and watch of one name.
  const informer = new Informer(
    kubeListerWatcher(client, SECRETS, secret.namespace, { fieldSelector: `metadata.name=${secret.name}` }),
    { name: `core/v1/secrets@${secret.namespace}/${secret.name}`, logger: log },
  );
  return {
    informer,
    ca: () => {
      const found = informer.get(secret.namespace, secret.name) as SecretObject | undefined;
      const pem = found && secretValue(found, GATEWAY_CA_KEY);
      return pem === undefined || pem.trim() === '' ? undefined : pem;
    },
  };
}

export interface GatewayCaPublisherOptions {
  readonly client: KubeClient;
  /** The watch scope (a shard's): one namespace, or undefined for all. */
  readonly namespace: string | undefined;
  readonly informers: Pick<Informers, 'predictionEndpoints' | 'registryServices'>;
  readonly source: GatewayCaSource;
  readonly workers: number;
  readonly log: Logger;
}

export interface GatewayCaPublisher {
  readonly controller: Controller;
  /** The published ConfigMaps (to run with the others). */
  readonly configMaps: Informer;
}

export function gatewayCaPublisher(options: GatewayCaPublisherOptions): GatewayCaPublisher {
  const { client, namespace, informers, source, log } = options;
  const configMaps = new Informer(
    kubeListerWatcher(client, coreResources.configMaps, namespace, {
      fieldSelector: `metadata.name=${GATEWAY_CA_CONFIGMAP}`,
    }),
    { name: `core/v1/configmaps/${GATEWAY_CA_CONFIGMAP}${namespace ? `@${namespace}` : ''}`, logger: log },
  );
  const hasClients = (ns: string): boolean =>
    informers.predictionEndpoints.list(ns).length > 0 || informers.registryServices.list(ns).length > 0;
  const keyIn = (o: KubeObject): string[] => [objectKey(o.metadata.namespace, GATEWAY_CA_CONFIGMAP)];

  const reconcile = async (req: ReconcileRequest): Promise<ReconcileResult> => {
    const ns = req.namespace;
    if (ns === undefined) return Action.done();
    const existing = configMaps.get(ns, GATEWAY_CA_CONFIGMAP) as ConfigMap | undefined;
    if (!hasClients(ns)) {
      if (existing && ownedByUs(existing)) {
        await client.delete(coreResources.configMaps, ns, GATEWAY_CA_CONFIGMAP, {
          signal: req.signal,
          preconditions: { uid: existing.metadata.uid },
        });
        req.log.info('gateway CA ConfigMap removed: no PredictionEndpoint or RegistryService left here');
      }
      return Action.done();
    }
    // Not issued yet: the Secret's arrival enqueues every namespace again.
    const ca = source.ca();
    if (ca === undefined) return Action.done();
    if (existing && existing.data?.[GATEWAY_CA_KEY] === ca && ownedByUs(existing)) return Action.done();
    await client.patch(
      coreResources.configMaps,
      ns,
      GATEWAY_CA_CONFIGMAP,
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: GATEWAY_CA_CONFIGMAP, namespace: ns, labels: MANAGED_LABELS },
        data: { [GATEWAY_CA_KEY]: ca },
      },
      // force: the ConfigMap's name is this operator's; a hand edit of ca.crt is put back.
      { type: 'apply', fieldManager: FIELD_MANAGER, force: true, signal: req.signal },
    );
    req.log.info(existing ? 'gateway CA ConfigMap updated' : 'gateway CA ConfigMap created');
    return Action.done();
  };

  const controller = new Controller({
    name: namespace ? `gatewayca@${namespace}` : 'gatewayca',
    kind: 'ConfigMap',
    primary: configMaps,
    reconcile,
    workers: options.workers,
    logger: log,
  });
  // The first PredictionEndpoint or RegistryService of a namespace brings the ConfigMap, the last one's
  // deletion takes it away: only adds and deletes change that, never an update.
  const addsAndDeletes = { predicate: (): boolean => false };
  controller.watches(informers.predictionEndpoints, keyIn, addsAndDeletes);
  controller.watches(informers.registryServices, keyIn, addsAndDeletes);
  // A new CA (issued, rotated, or written by cert-manager) goes to every namespace that has or should have it.
  controller.watches(source.informer, () => {
    const namespaces = new Set<string>();
    for (const o of [
      ...informers.predictionEndpoints.list(),
      ...informers.registryServices.list(),
      ...configMaps.list(),
    ])
      if (o.metadata.namespace !== undefined) namespaces.add(o.metadata.namespace);
    return [...namespaces].map((ns) => objectKey(ns, GATEWAY_CA_CONFIGMAP));
  });
  return { controller, configMaps };
}

function ownedByUs(cm: KubeObject): boolean {
  return cm.metadata.labels?.['app.kubernetes.io/managed-by'] === MANAGED_LABELS['app.kubernetes.io/managed-by'];
}
