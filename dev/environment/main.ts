/**
 * `endpoint-operator-dev start`, what `npm start` runs: each step below is one named function, called in order by
 * `main`; each registers how to stop what it started (teardown.ts).
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { UsageError, bool, str, type FlagValues } from '../../src/cli/flags.js';
import type { KubeObject } from '../../src/kube/kube-client.js';
import { startControlPlane } from '../cluster/index.js';
import { createModelHost, removeModelHost } from '../cluster/network.js';
import { capture } from '../host/exec.js';
import { demoBackendPlan, type DemoBackendPlan } from './demo-backends.js';
import { defaultExamplesDir, loadExampleObjects } from './examples.js';
import { HELP, modelPorts, parseDevFlags, plannedPorts } from './flags.js';
import { nodesForThisMachine } from './node-choice.js';
import type { Cluster, RealModel } from './on-cluster.js';
import { portProblems } from './port-check.js';
import { kubeconfigOnCommandLine, stoppedDevCluster } from './stopped-cluster.js';
import { buildRealModelImage, pushRealModelImage, withRealModel } from './real-node-model.js';
import { Teardown } from './teardown.js';

function say(line: string): void {
  process.stderr.write(`dev: ${line}\n`);
}

interface Options {
  readonly values: FlagValues;
  readonly namespace: string;
  readonly operatorNamespace: string;
  readonly kubeconfig: string | undefined;
  readonly examplesDir: string;
  readonly applyExamples: boolean;
  /** The real node (node-choice.ts), and how long to wait for another cluster to give it up. */
  readonly realNode: boolean;
  readonly realNodeWaitMs: number;
}

async function options(values: FlagValues, argv: readonly string[]): Promise<Options | number> {
  let kubeconfig = str(values, 'kubeconfig');
  const stopped = stoppedDevCluster({
    kubeconfig,
    fromCommandLine: kubeconfigOnCommandLine(argv),
    tmp: tmpdir(),
    exists: existsSync,
  });
  if (stopped !== undefined) {
    say(stopped);
    kubeconfig = undefined;
  }
  const nodes = await nodesForThisMachine(values, kubeconfig !== undefined, say);
  if (typeof nodes === 'number') return nodes;
  return {
    values,
    namespace: str(values, 'namespace') ?? 'endpoint-demo',
    operatorNamespace: str(values, 'operator-namespace') ?? 'endpoint-operator-system',
    kubeconfig,
    examplesDir: str(values, 'examples') ?? defaultExamplesDir(),
    applyExamples: bool(values, 'apply-examples'),
    realNode: nodes.kind === 'real',
    realNodeWaitMs: nodes.kind === 'real' ? nodes.waitMs : 0,
  };
}

interface Plan {
  readonly objects: KubeObject[];
  readonly demo: DemoBackendPlan[];
  readonly demoPorts: number[];
  /** The real model's image, built (the first time: minutes) while the cluster starts. */
  readonly realModelImage: Promise<{ built: { local: string; expected: number[] } } | { failed: Error }> | undefined;
}

async function plan(opts: Options): Promise<Plan> {
  const objects = opts.applyExamples ? await loadExampleObjects(opts.examplesDir) : [];
  const demo = demoBackendPlan(objects);
  // Before the build starts: a bad --model-ports is a usage error that must leave nothing running behind it.
  const demoPorts = modelPorts(opts.values, demo.length);
  const realModelImage = opts.realNode
    ? buildRealModelImage(say).then(
        (built) => ({ built }),
        (err: unknown) => ({ failed: err as Error }),
      )
    : undefined;
  return { objects, demo, demoPorts, realModelImage };
}

/**
 * The local cluster (or the one --kubeconfig names, with a model host of our own for the demo servers), with
 * `install` done in it: on the local cluster while its Nodes join.
 */
async function startCluster(
  opts: Options,
  run: Plan,
  teardown: Teardown,
  install: (kubeconfig: string) => Promise<void>,
): Promise<Cluster> {
  if (opts.kubeconfig !== undefined) {
    say(`using the cluster of ${opts.kubeconfig}`);
    await install(opts.kubeconfig);
    if (run.demo.length === 0) return { kubeconfig: opts.kubeconfig, plane: undefined, modelHost: undefined };
    const modelHost = await createModelHost(randomBytes(4).toString('hex'));
    teardown.add('the model host', () => removeModelHost(modelHost));
    return { kubeconfig: opts.kubeconfig, plane: undefined, modelHost };
  }
  say(
    `starting the local Kubernetes cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler; ${opts.realNode ? 'one real node (kubelet + containerd) beside Nodes simulated by kwok' : 'Nodes simulated by kwok'})`,
  );
  const plane = await startControlPlane({
    log: say,
    realNode: opts.realNode,
    realNodeWaitMs: opts.realNodeWaitMs,
    // The model's image, pulled and unpacked once, stays on the node for the next start.
    keepNodeImages: true,
    // A fresh cluster on every start: its controllers start without waiting on their client's rate limit.
    unthrottledControllerManager: true,
    whileNodesJoin: install,
  });
  teardown.add('the cluster', () => plane.stop());
  const version = await capture(plane.kubectl, ['--kubeconfig', plane.kubeconfigPath, 'version']);
  say(`kubectl version:\n  ${version.stdout.trim().split('\n').join('\n  ')}`);
  return { kubeconfig: plane.kubeconfigPath, plane, modelHost: plane.modelHost };
}

/** The real model's image in the node's registry, once built. */
async function pushRealModel(run: Plan): Promise<RealModel | undefined> {
  if (run.realModelImage === undefined) return undefined;
  const result = await run.realModelImage;
  if ('failed' in result) throw result.failed;
  const image = await pushRealModelImage(result.built.local);
  say(`real model server image ${image} in the node's registry`);
  return { image, expected: result.built.expected };
}

/** Aborted on SIGINT or SIGTERM (Ctrl-C), until `release`. */
function stopOnSignals(): { signal: AbortSignal; release(): void } {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

export async function main(argv: string[]): Promise<number> {
  const values = parseDevFlags(argv);
  if (typeof values === 'number') return values;
  let opts: Options | number;
  try {
    opts = await options(values, argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`endpoint-operator-dev start: ${err.message}\n\n${HELP}`);
    return 2;
  }
  if (typeof opts === 'number') return opts;
  const stop = stopOnSignals();
  const teardown = new Teardown(say);
  try {
    // Every port this process opens, checked before the control plane is built and started.
    const problems = await portProblems(plannedPorts(values));
    if (problems.length > 0) {
      for (const p of problems) say(p);
      return 2;
    }
    const run = await plan(opts);
    // Loaded while the cluster starts (on-cluster.ts says why); a failed import is reported where it is awaited.
    const onCluster = import('./on-cluster.js');
    onCluster.catch(() => undefined);
    const install = async (kubeconfig: string): Promise<void> =>
      (await onCluster).installIntoCluster(kubeconfig, {
        namespace: opts.namespace,
        operatorNamespace: opts.operatorNamespace,
        realNode: opts.realNode,
        say,
      });
    const cluster = await startCluster(opts, run, teardown, install);
    const realModel = await pushRealModel(run);
    const { serveOnCluster } = await onCluster;
    const printed = await serveOnCluster(
      {
        values,
        namespace: opts.namespace,
        operatorNamespace: opts.operatorNamespace,
        examplesDir: opts.examplesDir,
        applyExamples: opts.applyExamples,
        objects: realModel !== undefined ? withRealModel(run.objects, realModel.image) : run.objects,
        demo: run.demo,
        demoPorts: run.demoPorts,
        cluster,
        realModel,
        say,
      },
      stop.signal,
      teardown,
    );
    if (printed === undefined) return 0;
    const lines = [...printed, '', 'Press Ctrl-C to stop.'];
    process.stdout.write(`${lines.join('\n')}\n`);
    await untilAborted(stop.signal);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`endpoint-operator-dev start: ${err.message}\n\n${HELP}`);
      return 2;
    }
    say(`failed: ${(err as Error).message}`);
    return 1;
  } finally {
    say('stopping');
    await teardown.run();
    stop.release();
    say('stopped');
  }
}
