/**
 * The `endpoint-operator` binary: parses the subcommand and hands over to its module.
 * Wiring only; every subcommand lives in src/cli/<name>.ts and exports `main(argv)`.
 */
export interface Subcommand {
  readonly summary: string;
  readonly load: () => Promise<{ main(argv: string[]): Promise<number> }>;
}

// Subcommands are loaded lazily so that `validate` in a CI pipeline never loads the Kubernetes client or fastify.
export const subcommands: Record<string, Subcommand> = {
  'hash-password': {
    summary: 'read a password on stdin and print its argon2id PHC string (for a Secret)',
    load: () => import('./cli/hash-password.js'),
  },
  validate: {
    summary: 'validate manifests offline (files, directories or - for stdin)',
    load: () => import('./cli/validate.js'),
  },
  dev: {
    summary: 'the embedded default: local control plane, operator, webhooks, sign-in API and examples (npm start)',
    load: () => import('../dev/environment/main.js'),
  },
  run: {
    summary: 'run the controllers, webhooks, health and metrics (and the sign-in API with --signin) against a cluster',
    load: () => import('./cli/run.js'),
  },
  gateway: {
    summary:
      "serve PredictionEndpoints' :predict, :explain and :rawPredict, routed by the traffic split to the model servers (every replica serves)",
    load: () => import('./cli/gateway.js'),
  },
  crds: {
    summary: 'print the CustomResourceDefinitions (the same YAML as crds/)',
    load: () => import('./cli/crds.js'),
  },
  resolve: {
    summary: 'resolve a registry service as the lookup API does: NAME [--filter EXPR] [--max N]',
    load: () => import('./cli/resolve.js'),
  },
  cluster: {
    summary: 'run a local control plane (etcd + kube-apiserver) in the foreground: cluster up',
    load: () => import('../dev/cluster/main.js'),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(subcommands).map((n) => n.length), 4);
  const lines = Object.entries(subcommands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: endpoint-operator <command> [flags]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `endpoint-operator <command> --help` for the flags of a command.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const command = subcommands[name];
  if (!command) {
    console.error(`endpoint-operator: unknown command "${name}"\n\n${usage()}`);
    return 2;
  }
  const module = await command.load();
  return module.main(rest);
}
