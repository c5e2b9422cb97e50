/**
 * The flags of `endpoint-operator-dev start` (what `npm start` runs), its help, and the ports they plan.
 */
import { UsageError, list, num, parseFlags, renderFlags, type FlagSpec, type FlagValues } from '../../src/cli/flags.js';
import type { PlannedPort } from './port-check.js';

export const DEV_FLAGS: readonly FlagSpec[] = [
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    help: 'use this cluster instead of starting the local Kubernetes cluster',
  },
  {
    name: 'simulated-nodes',
    type: 'boolean',
    default: false,
    help: "run only kwok's simulated Nodes, without the real node: a containerSpec model is scheduled but runs no container",
  },
  {
    name: 'real-node',
    type: 'boolean',
    default: false,
    help: 'insist on the real node (the default where the machine can run one): refuse, rather than fall back to simulated Nodes, where it cannot',
  },
  {
    name: 'real-node-wait',
    type: 'number',
    default: 0,
    placeholder: 'SECONDS',
    help: "how long to wait for another local cluster to give up the machine's one real node (0: use simulated Nodes meanwhile)",
  },
  {
    name: 'namespace',
    type: 'string',
    default: 'endpoint-demo',
    placeholder: 'NS',
    help: 'namespace of the examples and of the sign-in API',
  },
  {
    name: 'operator-namespace',
    type: 'string',
    default: 'endpoint-operator-system',
    placeholder: 'NS',
    help: "the operator's own namespace (webhook certificate Secret)",
  },
  {
    name: 'examples',
    type: 'string',
    placeholder: 'DIR',
    help: 'manifests to apply (default: examples/valid of this checkout)',
  },
  {
    name: 'apply-examples',
    type: 'boolean',
    default: true,
    help: "apply the examples and create the demo users' password Secrets",
  },
  {
    name: 'signin-port',
    type: 'number',
    default: 8443,
    placeholder: 'PORT',
    help: 'port of the sign-in API on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'webhook-port',
    type: 'number',
    default: 0,
    placeholder: 'PORT',
    help: 'port of the admission and conversion webhooks on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'gateway-port',
    type: 'number',
    default: 8090,
    placeholder: 'PORT',
    help: 'port of the prediction gateway on 127.0.0.1 (0 = any free port)',
  },
  {
    name: 'model-ports',
    type: 'list',
    default: ['8701', '8702'],
    placeholder: 'PORT[,PORT]',
    help: "ports of the demo model servers in the model host's network namespace, one per backend Service of the examples' DeployedModels (0 = any free port)",
  },
  {
    name: 'wait',
    type: 'number',
    default: 120,
    placeholder: 'SECONDS',
    help: 'how long the live table waits for every resource to be Ready',
  },
];

export const HELP = `Usage: endpoint-operator-dev start [flags]

The embedded default (what \`npm start\` runs): starts (or reuses, with --kubeconfig) a local Kubernetes
cluster with one real node (kubelet + containerd, pulling from a local image registry: the examples'
containerSpec model runs there as a real model server) beside kwok's simulated Nodes; with simulated Nodes
only where the machine cannot run the real node (one line says why) or --simulated-nodes asks. Installs the
CRDs and webhooks, runs the operator, webhooks, sign-in API and prediction gateway in this process, starts
the demo model servers the examples' DeployedModels name in the cluster's model host (a network namespace;
with Services and EndpointSlices for them), applies the examples, and shows every resource's Ready
condition while they converge; then prints working curls of :predict. Every port is checked before anything
starts. Ctrl-C stops everything; the real node's image store is kept for the next start. Needs root.

Flags:
${renderFlags(DEV_FLAGS)}
  --help                  show this help`;

export const LOOPBACK = '127.0.0.1';

/** `--model-ports` as numbers, one per planned demo server (0 where the list is short). */
export function modelPorts(values: FlagValues, count: number): number[] {
  const given = list(values, 'model-ports').map((p) => Number(p));
  const bad = given.find((p) => !Number.isInteger(p) || p < 0 || p > 65535);
  if (bad !== undefined) throw new UsageError(`--model-ports takes port numbers (0..65535), got ${String(bad)}`);
  return Array.from({ length: count }, (_, i) => given[i] ?? 0);
}

/** The ports `dev` opens on this machine's loopback, each with the flag that moves it (the demo model servers' are in their own namespace). */
export function plannedPorts(values: FlagValues): PlannedPort[] {
  return [
    { what: 'the sign-in API', host: LOOPBACK, port: num(values, 'signin-port'), flag: '--signin-port' },
    { what: 'the webhooks', host: LOOPBACK, port: num(values, 'webhook-port'), flag: '--webhook-port' },
    { what: 'the prediction gateway', host: LOOPBACK, port: num(values, 'gateway-port'), flag: '--gateway-port' },
  ];
}

/** The flags of argv, or the exit code when there is nothing to run (usage printed, or the help asked for). */
export function parseDevFlags(argv: string[]): FlagValues | number {
  let values: FlagValues;
  try {
    values = parseFlags(DEV_FLAGS, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator-dev start: ${err.message}\n\n${HELP}`);
    return 2;
  }
  if (values.help === true) {
    console.log(HELP);
    return 0;
  }
  return values;
}
