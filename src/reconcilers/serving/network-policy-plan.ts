/**
 * The NetworkPolicy of a DeployedModel with `spec.containerSpec`: its pods take connections only from the
 * gateway's pods, on the model's container port (and from the peers an installation adds, such as a metrics
 * scraper). The gateway authenticates and authorises every call (TokenReview + SubjectAccessReview); without
 * the policy any pod of the cluster could call the model Service directly and skip that.
 *
 * The object is only a declaration: the cluster's policy engine (Calico, Cilium, kube-router, a cloud's
 * dataplane) enforces it, and a cluster without one accepts it and enforces nothing. The kubelet's probes
 * come from the node, which NetworkPolicy never blocks. Owned by the model like its Deployment, so garbage
 * collection removes it with the model.
 */
import type { KubeObject } from '../../api/common/kube-object.js';
import type { NetworkPolicyPeer } from '../../api/common/network-policy-peer.js';
import { containerPort, metadata, selector, type ServingInput } from './serving-plan.js';

/** The label the apiserver puts on every Namespace (since 1.22): a namespace selected by name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export interface ModelNetworkPolicySettings {
  /** Namespace of the gateway's pods (the operator's: the chart installs both there). */
  readonly gatewayNamespace: string;
  /** Labels that select the gateway's pods in that namespace. */
  readonly gatewayPodLabels: Readonly<Record<string, string>>;
  /**
   * More peers, admitted on every port: a metrics scraper reads whatever port the model server serves its
   * metrics on, which the containerSpec does not declare.
   */
  readonly extraIngressFrom: readonly NetworkPolicyPeer[];
}

export function networkPolicyManifest(input: ServingInput, settings: ModelNetworkPolicySettings): KubeObject {
  // One peer with both selectors: the gateway's pods in the gateway's namespace (two peers would admit either).
  const gateway = {
    namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: settings.gatewayNamespace } },
    podSelector: { matchLabels: { ...settings.gatewayPodLabels } },
  };
  const extra = settings.extraIngressFrom;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: metadata(input),
    spec: {
      podSelector: { matchLabels: selector(input.model) },
      policyTypes: ['Ingress'],
      ingress: [
        { from: [gateway], ports: [{ protocol: 'TCP', port: containerPort(input.spec.containerSpec) }] },
        ...(extra.length > 0 ? [{ from: [...extra] }] : []),
      ],
    },
  };
}
