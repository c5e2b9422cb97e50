/**
 * `endpoint-operator-dev start` (what `npm start` runs) as a user starts it: its own Kubernetes 1.37 cluster, every
 * example Ready, `kubectl version` shown, working calls printed; and the standard OTEL_* environment honoured,
 * as under `run` and `gateway`: the gateway's spans reach the OTLP endpoint it names, a real OpenTelemetry
 * Collector (test/support/otel-collector.ts).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensurePythonPackages } from '../../../dev/models/python-packages.js';
import { REPO_ROOT } from '../../support/examples.js';
import { ensureOtelCollector, OtelCollector } from '../../support/otel-collector.js';
import { SPAN_KIND, type ExportedSpan } from '../../support/otlp-json.js';

describe('endpoint-operator-dev start', () => {
  let collector: OtelCollector | undefined;
  let spans: readonly ExportedSpan[] = [];
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = null;
  let pythonAnswer = '';

  beforeAll(async () => {
    // Built from the Go module proxy on a fresh machine: minutes on two cores, once.
    collector = await OtelCollector.start(await ensureOtelCollector((line) => console.error(line)));
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
      ],
      {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        // No KUBECONFIG: dev starts its own cluster, as `npm start` does on a fresh machine.
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'KUBECONFIG')),
          OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
      },
    );
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<void>((resolve) =>
      child.once('exit', (code) => {
        exitCode = code;
        resolve();
      }),
    );
    const deadline = Date.now() + 300_000;
    while (!stdout.includes('Press Ctrl-C to stop.') && exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 250));
    // The Python snippet dev printed, run as printed (its here-document to python3) with Google's SDK installed.
    if (stdout.includes("python3 - <<'EOF'")) pythonAnswer = await runPrintedPython(stdout);
    // Ctrl-C: dev stops everything, flushing its spans on the way out.
    child.kill('SIGINT');
    await exited;
    // dev exported its last spans before it exited; the collector has written all it received.
    await collector.allWritten();
    spans = await collector.spans();
  }, 1_200_000);

  afterAll(async () => {
    await collector?.stop();
  });

  it('starts a Kubernetes 1.37 cluster, converges every example and prints calls it tried, then stops cleanly', () => {
    expect(stdout, stderr).toContain('Press Ctrl-C to stop.');
    expect(exitCode, stderr).toBe(0);
    expect(stderr).toMatch(/Server Version: v1\.37\.\d+/);
    expect(stderr).toMatch(/all \d+ resources Ready/);
    expect(stdout).toMatch(/10 calls just now: (7 × \d+, 3 × \d+|3 × \d+, 7 × \d+); :explain answered 200/);
    expect(stderr).toContain('dev: stopped');
  });

  it('prints a TLS gateway, its CA and a Python snippet that works as printed', () => {
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
