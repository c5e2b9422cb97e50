/**
 * `endpoint-operator resolve NAME [--filter EXPR] [--max N]`: Service Directory's ResolveService for
 * admins, answered from the cluster itself. It lists RegistryServices and RegistryEndpoints through
 * the same lookup cache the gateway serves from (same readiness, name ownership, filter and
 * clamping), so it works without a gateway and shows exactly what a client of the gateway gets.
 * Prints the ResolveServiceResponse JSON (or one line per endpoint with --output table).
 * Exit codes: 0 resolved, 1 not found or the cluster could not be read, 2 usage or filter syntax.
 */
import { DEFAULT_RESERVED_PREFIXES } from '../api/common/kind.js';
import { GoogleApiError } from '../gateway/google-errors.js';
import { startRegistryLookup } from '../gateway/registry/cache.js';
import { parseFilterField, resolveService, type EndpointJson } from '../gateway/registry/lookup.js';
import { KubeClient } from '../kube/kube-client.js';
import { UsageError, list, parseFlags, renderFlags, str, type FlagSpec, type FlagValues } from './flags.js';

export const RESOLVE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'filter',
    type: 'string',
    placeholder: 'EXPR',
    help: "endpoint filter, e.g. 'annotations.protocol=grpc AND port>=8000' (Service Directory's language)",
  },
  {
    name: 'max',
    type: 'number',
    placeholder: 'N',
    help: 'maxEndpoints: default 25, at most 100 (values below 1 mean the default)',
  },
  {
    name: 'output',
    type: 'string',
    default: 'json',
    placeholder: 'json|table',
    help: 'the ResolveServiceResponse as JSON, or one line per endpoint',
  },
  {
    name: 'namespace',
    type: 'string',
    placeholder: 'NS',
    help: 'read one namespace only (default: all, as name ownership is decided over all)',
  },
  {
    name: 'timeout',
    type: 'number',
    default: 30,
    placeholder: 'SECONDS',
    help: 'give up when the registry cannot be listed within this time',
  },
  {
    name: 'kubeconfig',
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'PATH',
    help: 'kubeconfig file; without it: in-cluster config, then ~/.kube/config',
  },
  {
    name: 'reserved-prefix',
    type: 'list',
    env: 'EO_RESERVED_PREFIXES',
    default: DEFAULT_RESERVED_PREFIXES,
    placeholder: 'DOMAIN',
    help: 'annotation prefixes left out of the effective annotations (as the operator is configured)',
  },
];

const HELP = `Usage: endpoint-operator resolve NAME [flags]

Resolves a registry service as the gateway's POST /v1/NAME:resolve does, reading the cluster directly.
NAME is a RegistryService spec.name: projects/{project}/locations/{location}/namespaces/{namespace}/services/{service}.

Flags:
${renderFlags(RESOLVE_FLAGS)}
  --help                              show this help`;

function table(endpoints: readonly EndpointJson[]): string {
  const rows = endpoints.map((e) => [
    e.name,
    e.address ?? '',
    String(e.port ?? 0),
    Object.entries(e.annotations ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(','),
  ]);
  const all = [['NAME', 'ADDRESS', 'PORT', 'ANNOTATIONS'], ...rows];
  const widths = [0, 1, 2].map((i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((c, i) => (i < 3 ? c.padEnd(widths[i] ?? 0) : c))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const positional = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined;
  let values: FlagValues;
  try {
    values = parseFlags(RESOLVE_FLAGS, positional === undefined ? argv : argv.slice(1));
    if (values.help === true) {
      console.log(HELP);
      return 0;
    }
    if (positional === undefined) throw new UsageError('NAME is required');
    const output = str(values, 'output');
    if (output !== 'json' && output !== 'table')
      throw new UsageError(`--output: expected json or table, got "${String(output)}"`);
    // A filter with a syntax error is refused before the cluster is read.
    parseFilterField('--filter', str(values, 'filter'));
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`endpoint-operator resolve: ${err.message}\n\n${HELP}`);
      return 2;
    }
    if (err instanceof GoogleApiError) {
      console.error(`endpoint-operator resolve: ${err.message}`);
      return 2;
    }
    throw err;
  }
  const client = KubeClient.fromKubeconfig(str(values, 'kubeconfig'));
  const namespace = str(values, 'namespace');
  const lookup = startRegistryLookup({
    client,
    reservedPrefixes: list(values, 'reserved-prefix'),
    ...(namespace !== undefined ? { namespaces: [namespace] } : {}),
  });
  try {
    const seconds = typeof values.timeout === 'number' ? values.timeout : 30;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `could not list RegistryServices and RegistryEndpoints within ${seconds} s (is the cluster reachable, and may this user list them?)`,
            ),
          ),
        seconds * 1000,
      );
    });
    await Promise.race([lookup.ready, timedOut]).finally(() => clearTimeout(timer));
    const filter = str(values, 'filter');
    const max = values.max;
    const answer = resolveService(lookup.source, positional, {
      ...(filter !== undefined ? { endpointFilter: filter } : {}),
      ...(typeof max === 'number' ? { maxEndpoints: max } : {}),
    });
    console.log(values.output === 'table' ? table(answer.service.endpoints ?? []) : JSON.stringify(answer, null, 2));
    return 0;
  } catch (err) {
    console.error(`endpoint-operator resolve: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await lookup.stop();
    client.close();
  }
}
