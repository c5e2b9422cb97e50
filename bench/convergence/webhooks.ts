/**
 * The operator's admission webhooks for the convergence benchmark, served from this process for
 * both phases: a production cluster runs them for every client, so the baseline's creates pay for
 * validation and the finalizer mutation exactly as the operator phase's creates do.
 */
import { pino } from 'pino';
import { defaultValidationOptions } from '../../src/api/common/kind.js';
import type { KubeClient } from '../../src/kube/kube-client.js';
import type { KubeObject } from '../../src/api/common/kube-object.js';
import { MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS } from '../../src/webhook/install.js';
import { runWebhooks, type RunningWebhooks } from '../../src/webhook/run.js';
import { localWebhookSettings } from '../../src/webhook/settings.js';

const PREDICTION_ENDPOINTS = {
  group: 'prediction.endpoint-operator.dev',
  version: 'v1',
  plural: 'predictionendpoints',
  namespaced: true,
} as const;

/** Creates probe PredictionEndpoints until one comes back with (or without) the finalizer the mutating webhook sets. */
async function untilMutation(client: KubeClient, probeNamespace: string, wanted: boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const name = `probe-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const probe = await client.create<KubeObject>(PREDICTION_ENDPOINTS, probeNamespace, {
      apiVersion: 'prediction.endpoint-operator.dev/v1',
      kind: 'PredictionEndpoint',
      metadata: { name },
      spec: { displayName: 'probe' },
    });
    if ((probe.metadata.finalizers !== undefined) === wanted) return;
    if (Date.now() > deadline)
      throw new Error(`the API server did not ${wanted ? 'start' : 'stop'} calling the mutating webhook within 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Starts the webhooks and waits until the API server calls them (it loads configurations through an informer). */
export async function startBenchWebhooks(
  client: KubeClient,
  operatorNamespace: string,
  probeNamespace: string,
  signal: AbortSignal,
): Promise<RunningWebhooks> {
  const running = await runWebhooks({
    client,
    settings: localWebhookSettings(0, { namespace: operatorNamespace }),
    listen: { host: '127.0.0.1', port: 0 },
    options: defaultValidationOptions,
    log: pino({ level: process.env['BENCH_LOG'] ?? 'warn' }),
    signal,
  });
  await untilMutation(client, probeNamespace, true);
  return running;
}

/** Removes both admission configurations, as on a cluster without the operator, and waits until the API server noticed. */
export async function removeBenchWebhooks(
  client: KubeClient,
  running: RunningWebhooks,
  probeNamespace: string,
): Promise<void> {
  await client.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, running.settings.configurationName);
  await client.delete(MUTATING_WEBHOOK_CONFIGURATIONS, undefined, running.settings.configurationName);
  await untilMutation(client, probeNamespace, false);
}
