/**
 * `endpoint-operator-dev start` (what `npm start` runs) as a user starts it, twice: by default (the real node, whose
 * model answers a real :predict) and with --simulated-nodes (kwok only). Each: its own Kubernetes 1.37 cluster,
 * every example Ready, `kubectl version` shown, working calls printed, a clean stop on Ctrl-C; and the standard
 * OTEL_* environment honoured, as under `run` and `gateway`: the gateway's spans reach the OTLP endpoint it names, a
 * real OpenTelemetry Collector (test/support/otel-collector.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realNodeImageStoreDir } from '../../../dev/cluster/real-node/node.js';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { REPO_ROOT } from '../../support/examples.js';
import { realNodeLeftovers } from '../../support/real-node.js';
import { ensureOtelCollector, OtelCollector } from '../../support/otel-collector.js';
import { SPAN_KIND, type ExportedSpan } from '../../support/otlp-json.js';

/** One `endpoint-operator-dev start` as a user runs it, stopped with Ctrl-C once it printed its calls. */
interface DevRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number | null;
  /** From the spawn to "Press Ctrl-C to stop.", and from the SIGINT to the exit (printed, not asserted: figures of a shared machine). */
  readonly secondsToReady: number;
  readonly secondsToStop: number;
  /** What the Python snippet printed, run as printed while dev ran. */
  readonly pythonAnswer: string;
}

async function runDev(label: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<DevRun> {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(REPO_ROOT, 'test/support/run-dev-cli.ts'),
      'start',
      '--signin-port',
      '0',
      '--gateway-port',
      '0',
      '--webhook-port',
      '0',
      '--model-ports',
      '0,0',
      ...args,
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // No KUBECONFIG: dev starts its own cluster, as `npm start` does on a fresh machine.
      env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'KUBECONFIG')), ...env },
    },
  );
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = null;
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      resolve();
    }),
  );
  // The real node's first start builds its model image (minutes), and may wait for another test's real node.
  const deadline = Date.now() + 1_500_000;
  while (!stdout.includes('Press Ctrl-C to stop.') && exitCode === null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250));
  const secondsToReady = (Date.now() - started) / 1000;
  // The Python snippet dev printed, run as printed (its here-document to python3) with Google's SDK installed.
  const pythonAnswer = stdout.includes("python3 - <<'EOF'") ? await runPrintedPython(stdout) : '';
  // Ctrl-C: dev stops everything, flushing its spans on the way out.
  const interrupted = Date.now();
  child.kill('SIGINT');
  await exited;
  const secondsToStop = (Date.now() - interrupted) / 1000;
  console.error(
    `[dev ${label}] "Press Ctrl-C" ${secondsToReady.toFixed(1)} s after the start, stopped ${secondsToStop.toFixed(1)} s after Ctrl-C`,
  );
  return { stdout, stderr, exitCode, secondsToReady, secondsToStop, pythonAnswer };
}

describe('endpoint-operator-dev start', () => {
  let collector: OtelCollector | undefined;
  let spans: readonly ExportedSpan[] = [];
  let real: DevRun | undefined;
  let simulated: DevRun | undefined;
  let leftAfterRealNode: string[] = [];

  beforeAll(async () => {
    // Built from the Go module proxy on a fresh machine: minutes on two cores, once.
    collector = await OtelCollector.start(await ensureOtelCollector((line) => console.error(line)));
    // The default: the real node. It waits its turn for the machine's one real node (other test files use it).
    real = await runDev('default (real node)', ['--real-node-wait', '1200'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    leftAfterRealNode = await realNodeLeftovers();
    // dev exported its last spans before it exited; the collector has written all it received.
    await collector.allWritten();
    spans = await collector.spans();
    simulated = await runDev('--simulated-nodes', ['--simulated-nodes'], {});
  }, 3_600_000);

  afterAll(async () => {
    await collector?.stop();
  });

  it('starts a Kubernetes 1.37 cluster, converges every example and prints calls it tried, then stops cleanly', () => {
    for (const run of [real, simulated]) {
      const { stdout = '', stderr = '', exitCode } = run ?? {};
      expect(stdout, stderr).toContain('Press Ctrl-C to stop.');
      expect(exitCode, stderr).toBe(0);
      expect(stderr).toMatch(/Server Version: v1\.37\.\d+/);
      expect(stderr).toMatch(/all \d+ resources Ready/);
      expect(stdout).toMatch(/10 calls just now: (7 × \d+, 3 × \d+|3 × \d+, 7 × \d+); :explain answered 200/);
      expect(stderr).toContain('dev: stopped');
    }
  });

  it("runs the examples' containerSpec model on the real node by default, answering what scikit-learn computes", () => {
    const { stdout = '', stderr = '' } = real ?? {};
    // No fallback line: this machine runs the real node (the other real-node tests need it too).
    expect(stderr).not.toContain('no real node:');
    expect(stderr).toMatch(/one real node \(kubelet \+ containerd\) beside Nodes simulated by kwok/);
    expect(stderr).toMatch(/real node \S+ Ready in/);
    expect(stdout).toContain('Their pods run on the real node');
    const answer = /Its :predict answered (\d+) with\s+predictions (\S+) \(scikit-learn here: (\S+), the same\)/.exec(
      stdout,
    );
    expect(answer?.[1], stdout).toBe('200');
    expect(answer?.[2]).toBe(answer?.[3]);
  });

  it('leaves no process, mount, cgroup or network namespace of the real node, only its image store', () => {
    expect(leftAfterRealNode).toEqual([]);
    expect(existsSync(realNodeImageStoreDir())).toBe(true);
  });

  it('runs only simulated nodes with --simulated-nodes, and says their pods answer no calls', () => {
    const { stdout = '', stderr = '' } = simulated ?? {};
    expect(stderr).toMatch(/kube-scheduler; Nodes simulated by kwok\)/);
    expect(stderr).not.toMatch(/real node|local registry/);
    expect(stdout).toContain('Their pods are simulated');
    expect(stdout).not.toContain('Real model server');
  });

  it('prints a TLS gateway, its CA and a Python snippet that works as printed', () => {
    const { stdout = '', pythonAnswer = '' } = real ?? {};
    expect(stdout).toMatch(/export GATEWAY_CA=\S+ca\.crt/);
    expect(stdout).toMatch(/Prediction gateway: https:\/\/localhost:\d+/);
    expect(stdout).toContain('--cacert "$GATEWAY_CA"');
    // The SDK's Prediction object: the predictions and the deployed model that answered them.
    expect(pythonAnswer).toMatch(/Prediction\(predictions=\[/);
    expect(pythonAnswer).toMatch(/deployed_model_id='\d+'/);
  });

  it("sends the gateway's spans to the OTLP endpoint OTEL_EXPORTER_OTLP_ENDPOINT names", () => {
    const served = spans.filter(
      (s) =>
        s.service === 'endpoint-operator' &&
        s.kind === SPAN_KIND.server &&
        s.attributes['endpoint_operator.method'] === 'predict',
    );
    // dev's own ten calls through the gateway before it printed them.
    expect(served.length).toBeGreaterThanOrEqual(10);
    const toModel = spans.filter(
      (s) => s.kind === SPAN_KIND.client && served.some((p) => p.traceId === s.traceId && p.spanId === s.parentSpanId),
    );
    expect(toModel.length).toBeGreaterThanOrEqual(10);
  });
});

/** Runs the shell lines dev printed for Python (the exports it names, then the here-document) with bash. */
async function runPrintedPython(printed: string): Promise<string> {
  const lines = printed.split('\n');
  const exported = lines.filter((l) => /^\s+export (GATEWAY_CA|TOKEN)=/.test(l)).map((l) => l.trim());
  const start = lines.findIndex((l) => l.includes("python3 - <<'EOF'"));
  const end = lines.indexOf('EOF', start);
  const script = [...exported, ...lines.slice(start, end + 1)].join('\n');
  const py = await ensurePythonPackages('aiplatform-sdk', (line) => console.error(`[python] ${line}`));
  try {
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      env: py.env({ METADATA_SERVER_DETECTION: 'none', GCE_METADATA_HOST: '127.0.0.1:1' }),
      timeout: 120_000,
    });
    return stdout;
  } catch (err) {
    return `failed: ${(err as Error).message}`;
  }
}
