/**
 * The `endpoint-operator-dev` binary (bin/endpoint-operator-dev.js): the project's local Kubernetes cluster and the
 * demo environment `npm start` runs, built on the product in src/ and never shipped in its image.
 */
import { runSubcommand, type Subcommand } from '../src/main.js';

export const devSubcommands: Record<string, Subcommand> = {
  start: {
    summary:
      'the embedded default: local control plane, operator, webhooks, sign-in API, gateway and examples (npm start)',
    load: () => import('./environment/main.js'),
  },
  cluster: {
    summary: 'run a local control plane (etcd + kube-apiserver, kwok Nodes) in the foreground: cluster up',
    load: () => import('./cluster/main.js'),
  },
};

export function main(argv: string[]): Promise<number> {
  return runSubcommand('endpoint-operator-dev', devSubcommands, argv);
}
