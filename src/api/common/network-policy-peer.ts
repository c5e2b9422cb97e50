/**
 * networking.k8s.io/v1 NetworkPolicyPeer and its LabelSelector, as the operator takes them from an installation
 * (`--model-network-policy-extra-from`, chart value `modelNetworkPolicy.extraIngressFrom`): checked at start, so a
 * mistake is a usage error rather than a policy the apiserver refuses on every reconcile.
 */
import { z } from 'zod';

const labelSelectorSchema = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string().min(1),
        operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

/** networking.k8s.io/v1 NetworkPolicyPeer, as `--model-network-policy-extra-from` takes it (JSON). */
export const networkPolicyPeerSchema = z
  .strictObject({
    podSelector: labelSelectorSchema.optional(),
    namespaceSelector: labelSelectorSchema.optional(),
    ipBlock: z.strictObject({ cidr: z.string().min(1), except: z.array(z.string()).optional() }).optional(),
  })
  .refine((p) => p.podSelector !== undefined || p.namespaceSelector !== undefined || p.ipBlock !== undefined, {
    error: 'a peer needs podSelector, namespaceSelector or ipBlock',
  })
  .refine((p) => p.ipBlock === undefined || (p.podSelector === undefined && p.namespaceSelector === undefined), {
    error: 'ipBlock cannot be combined with podSelector or namespaceSelector',
  });
export type NetworkPolicyPeer = z.infer<typeof networkPolicyPeerSchema>;
