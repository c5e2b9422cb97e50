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
  validate: { summary: 'validate manifests offline (files, directories or - for stdin)', load: () => import('./cli/validate.js') },
  crds: { summary: 'print the CustomResourceDefinitions (the same YAML as crds/)', load: () => import('./cli/crds.js') },
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
