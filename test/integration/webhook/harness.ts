import { pino } from 'pino';
import { defaultValidationOptions } from '../../../src/api/common/kind.js';
import { generateCrds } from '../../../src/api/crd/generate.js';
import { ApiError } from '../../../src/kube/api-error.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { installCrds } from '../../../src/operator/crds.js';
import {
  CRDS,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  type InstallReport,
} from '../../../src/webhook/install.js';
import { runWebhooks } from '../../../src/webhook/run.js';
import type { WebhookServer } from '../../../src/webhook/server.js';
import { localWebhookSettings, type WebhookSettings } from '../../../src/webhook/settings.js';
import { createTestNamespace, testCluster } from '../../support/cluster.js';

export interface WebhookHarness {
  readonly client: KubeClient;
  readonly server: WebhookServer;
  readonly settings: WebhookSettings;
  readonly install: InstallReport;
  /** The namespace holding the certificate Secret (the operator's namespace in a real install). */
  readonly operatorNamespace: string;
  stop(): Promise<void>;
}

/** Takes the webhook configurations out of the shared cluster and turns the CRDs' conversion webhook off again. */
export async function uninstallWebhooks(client: KubeClient, configurationName: string): Promise<void> {
  // Later test files share this API server: a configuration left pointing at a closed server
  // would refuse all their writes (failurePolicy Fail), and the CRDs' conversion would fail.
  await client.delete(VALIDATING_WEBHOOK_CONFIGURATIONS, undefined, configurationName).catch(() => false);
  // failurePolicy Ignore, but every create would still wait on a refused connection and log a warning.
  await client.delete(MUTATING_WEBHOOK_CONFIGURATIONS, undefined, configurationName).catch(() => false);
  for (const crd of generateCrds()) {
    if (crd.spec.conversion === undefined) continue;
    await client
      .patch(
        CRDS,
        undefined,
        crd.metadata.name,
        { spec: { conversion: { strategy: 'None', webhook: null } } },
        { type: 'merge' },
      )
      .catch(() => undefined);
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The operator's webhook side as `endpoint-operator run` will wire it, in local mode: certificates
 * in a Secret, the HTTPS server on 127.0.0.1 in this process, the CRDs pointing their conversion
 * at it and the Validating- and MutatingWebhookConfiguration installed.
 */
export async function startWebhookHarness(): Promise<WebhookHarness> {
  const client = KubeClient.fromKubeconfig(testCluster().kubeconfig);
  const operatorNamespace = await createTestNamespace('webhook-operator');
  await installCrds(client);
  const abort = new AbortController();
  const running = await runWebhooks({
    client,
    settings: localWebhookSettings(0, { namespace: operatorNamespace }),
    listen: { host: '127.0.0.1', port: 0 },
    options: defaultValidationOptions,
    log: pino({ level: process.env['EO_TEST_WEBHOOK_LOG'] ?? 'warn' }),
    signal: abort.signal,
  });
  const { server, settings, install } = running;
  const harness: WebhookHarness = {
    client,
    server,
    settings,
    install,
    operatorNamespace,
    async stop() {
      await uninstallWebhooks(client, settings.configurationName);
      abort.abort();
      await running.close();
      client.close();
    },
  };
  try {
    // Not the operator's namespace: the configuration exempts it (on Kubernetes 1.21+).
    const probeNamespace = await createTestNamespace('webhook-probe');
    // The API server picks configurations up through an informer: wait until a bad object is refused by the webhook.
    await until('the validating webhook to be called', 30_000, async () => {
      try {
        await client.create(
          { group: 'prediction.endpoint-operator.dev', version: 'v1', plural: 'predictionendpoints', namespaced: true },
          probeNamespace,
          // A rule only the webhook enforces (the CRD cannot count UTF-8 bytes): a BigQuery table id of 1,200 bytes.
          {
            apiVersion: 'prediction.endpoint-operator.dev/v1',
            kind: 'PredictionEndpoint',
            metadata: { name: 'probe' },
            spec: {
              displayName: 'probe',
              predictRequestResponseLoggingConfig: {
                bigqueryDestination: { outputUri: `bq://probe-project.logs.${'é'.repeat(600)}` },
              },
            },
          },
          { dryRun: true },
        );
        return undefined;
      } catch (err) {
        return err instanceof ApiError && err.message.includes('denied the request') ? true : undefined;
      }
    });
  } catch (err) {
    await harness.stop();
    throw err;
  }
  return harness;
}
