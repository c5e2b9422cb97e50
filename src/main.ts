/**
 * The `endpoint-operator` binary: parses the subcommand and hands over to its module.
 * Wiring only; every subcommand lives in src/cli/<name>.ts and exports `main(argv)`. The development binary
 * (dev/main.ts, `endpoint-operator-dev`) dispatches its own subcommands with the same `runSubcommand`.
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
};

/** Subcommands that moved to the development binary, which the image does not ship: what to run instead. */
const MOVED_TO_DEV: Record<string, string> = {
  dev: '`npm start` (endpoint-operator-dev start)',
  cluster: '`npm run cluster -- up` (endpoint-operator-dev cluster up)',
};

function usage(binary: string, commands: Record<string, Subcommand>): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length), 4);
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return [
    `Usage: ${binary} <command> [flags]`,
    '',
    'Commands:',
    ...lines,
    '',
    `Run \`${binary} <command> --help\` for the flags of a command.`,
  ].join('\n');
}

/** Runs `argv[0]` of `commands` with the rest of argv; usage on none, `--help` or an unknown name. */
export async function runSubcommand(
  binary: string,
  commands: Record<string, Subcommand>,
  argv: string[],
  moved: Record<string, string> = {},
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage(binary, commands));
    return name === undefined ? 2 : 0;
  }
  const command = commands[name];
  if (!command) {
    const instead = moved[name];
    console.error(
      instead !== undefined
        ? `${binary}: "${name}" is part of the development tree (dev/), not of this binary: in a checkout, run ${instead}`
        : `${binary}: unknown command "${name}"\n\n${usage(binary, commands)}`,
    );
    return 2;
  }
  const module = await command.load();
  return module.main(rest);
}

export function main(argv: string[]): Promise<number> {
  return runSubcommand('endpoint-operator', subcommands, argv, MOVED_TO_DEV);
}
