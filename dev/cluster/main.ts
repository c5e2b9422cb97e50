import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ControlPlaneError, RELEASES, startControlPlane } from './index.js';

const HELP = `Usage: endpoint-operator-dev cluster up [flags]

Starts a local Kubernetes cluster in the foreground, on free loopback ports: etcd, kube-apiserver,
kube-controller-manager and kube-scheduler of Kubernetes ${RELEASES[0]?.version ?? ''} (EO_KUBE_RELEASE=${RELEASES.map((r) => r.minor).join('|')} picks the
release), and kwok, which simulates two Nodes: Pods are scheduled, become Ready and get addresses, but no
container runs. Stops cleanly on Ctrl-C or SIGTERM and leaves no process behind.

The first run builds the binaries with Go and the Go module proxy from the wrapper modules in tools/
(about 6 minutes on 2 cores, once per release); they are cached in ~/.cache/endpoint-operator/bin
(EO_CACHE_DIR overrides). Later starts take seconds. Needs root: simulated pod addresses get an
unreachable route, and model servers get a network namespace (the model host) the cluster can address.

Flags:
  --data-dir DIR   keep etcd data, certificates and logs in DIR (default: a temporary directory, removed on stop)
  --watch-cache    enable the apiserver's watch cache (default off, so compacting etcd gives 410 Gone)
  -h, --help       show this help`;

export async function main(argv: string[]): Promise<number> {
  let parsed: { values: { 'data-dir'?: string; 'watch-cache'?: boolean; help?: boolean }; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        'watch-cache': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    console.error(`endpoint-operator-dev cluster: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (positionals.length !== 1 || positionals[0] !== 'up') {
    console.error(
      `endpoint-operator-dev cluster: expected the action "up", got ${positionals.length === 0 ? 'none' : `"${positionals.join(' ')}"`}\n\n${HELP}`,
    );
    return 2;
  }

  const log = (line: string): void => console.error(`cluster: ${line}`);
  // Register before starting, so a Ctrl-C during the (long) first build or the start still stops cleanly.
  let interrupted: NodeJS.Signals | undefined;
  let wake: () => void = () => {};
  let started = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    interrupted = signal;
    if (!started) {
      // startControlPlane cannot be cancelled half-way (a build, a start); exiting is clean all the same:
      // the 'exit' handler kills started children and the watchdogs end a running build and tidy up.
      log(`interrupted (${signal}) before the control plane was up; exiting`);
      process.exit(130);
    }
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let plane;
    try {
      plane = await startControlPlane({
        log,
        watchCache: values['watch-cache'] === true,
        ...(values['data-dir'] !== undefined ? { dataDir: values['data-dir'] } : {}),
      });
    } catch (err) {
      console.error(`endpoint-operator-dev cluster: ${err instanceof ControlPlaneError ? err.message : String(err)}`);
      return 1;
    }
    started = true;
    if (interrupted === undefined) {
      console.log(
        [
          `Kubernetes:     ${plane.version} (${plane.nodes.length} simulated Nodes: ${plane.nodes.join(', ')})`,
          `kube-apiserver: ${plane.server}`,
          `etcd:           ${plane.etcdEndpoint}`,
          `kubeconfig:     ${plane.kubeconfigPath}`,
          `model host:     ${plane.modelHost.address} (network namespace ${plane.modelHost.netns})`,
          '',
          `  export KUBECONFIG=${plane.kubeconfigPath}`,
          `  export PATH=${dirname(plane.kubectl)}:$PATH`,
          '  kubectl get nodes',
          '',
          'Press Ctrl-C to stop.',
        ].join('\n'),
      );
      // The children are unref'd and a bare pending promise holds no handle: without this timer Node would
      // consider itself idle, exit, and take the control plane down with it.
      const keepAlive = setInterval(() => {}, 1 << 30);
      await new Promise<void>((resolve) => (wake = resolve));
      clearInterval(keepAlive);
    }
    log(`stopping (${interrupted ?? 'signal'})`);
    await plane.stop();
    log('stopped');
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
