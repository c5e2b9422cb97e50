/**
 * The operator's flags for the NetworkPolicy of containerSpec models (chart values `modelNetworkPolicy.*`,
 * src/deploy/values.ts) and their reading into ModelNetworkPolicySettings
 * (src/reconcilers/serving/network-policy-plan.ts). The gateway's namespace is the operator's own.
 */
import { z } from 'zod';
import { gatewaySelectorLabels } from '../deploy/values.js';
import { networkPolicyPeerSchema } from '../api/common/network-policy-peer.js';
import type { ModelNetworkPolicySettings } from '../reconcilers/serving/network-policy-plan.js';
import { UsageError, bool, list, str, type FlagSpec, type FlagValues } from './flags.js';

export const MODEL_NETWORK_POLICY_FLAGS: readonly FlagSpec[] = [
  {
    name: 'model-network-policy',
    type: 'boolean',
    env: 'EO_MODEL_NETWORK_POLICY',
    default: true,
    help: "a NetworkPolicy per DeployedModel with containerSpec, admitting ingress to its pods only from the gateway's pods (--gateway-pod-labels, in the operator namespace) and --model-network-policy-extra-from; enforced only by the cluster's policy engine. Off: the operator deletes the ones it made",
  },
  {
    name: 'gateway-pod-labels',
    type: 'list',
    env: 'EO_GATEWAY_POD_LABELS',
    default: Object.entries(gatewaySelectorLabels()).map(([k, v]) => `${k}=${v}`),
    placeholder: 'KEY=VALUE[,...]',
    help: "labels of the gateway's pods (the chart's), whom a model's NetworkPolicy admits",
  },
  {
    name: 'model-network-policy-extra-from',
    type: 'string',
    env: 'EO_MODEL_NETWORK_POLICY_EXTRA_FROM',
    placeholder: 'JSON',
    help: 'more peers a model\'s NetworkPolicy admits on every port, as a JSON list of NetworkPolicyPeer (a metrics scraper: [{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}}}])',
  },
];

function labelsOf(pairs: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--gateway-pod-labels: expected KEY=VALUE, got ${JSON.stringify(pair)}`);
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (Object.keys(labels).length === 0)
    throw new UsageError(
      "--gateway-pod-labels must name at least one label: an empty selector admits every pod of the gateway's namespace",
    );
  return labels;
}

function extraPeersOf(text: string | undefined): ModelNetworkPolicySettings['extraIngressFrom'] {
  if (text === undefined || text.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--model-network-policy-extra-from is not JSON: ${(err as Error).message}`);
  }
  const parsed = z.array(networkPolicyPeerSchema).safeParse(json);
  if (!parsed.success)
    throw new UsageError(
      `--model-network-policy-extra-from must be a JSON list of NetworkPolicyPeer: ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data;
}

/** The settings, or undefined when the flag is off (the operator then deletes the policies it made). */
export function modelNetworkPolicyConfig(
  values: FlagValues,
  operatorNamespace: string,
): ModelNetworkPolicySettings | undefined {
  // Read even when off, so a wrong value fails at start, not when the policy is turned on.
  const gatewayPodLabels = labelsOf(list(values, 'gateway-pod-labels'));
  const extraIngressFrom = extraPeersOf(str(values, 'model-network-policy-extra-from'));
  if (!bool(values, 'model-network-policy')) return undefined;
  return { gatewayNamespace: operatorNamespace, gatewayPodLabels, extraIngressFrom };
}
