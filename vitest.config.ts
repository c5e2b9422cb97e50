import { defineConfig } from 'vitest/config';

// Lets the product's worker threads start on their TypeScript sources (the file says how).
const setupFiles = ['test/support/source-workers.ts'];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          setupFiles,
          // A worker per core, not vitest's default of cores − 1 (one worker on a 2-core machine): much of the
          // tier waits on child processes (the CLI as a user runs it, credential plugins, helm, promtool).
          maxWorkers: '100%',
          // Files share a worker's module graph instead of importing src/ afresh each: re-importing it cost
          // more than many files' own tests. Unit tests hold no global state between files (metrics are
          // read as deltas, environment and timers restored, registries and servers their own).
          isolate: false,
          // CPU-bound tests (property tests of 2,000 runs, the validators over every example) take 1–5 s alone and
          // several times that when the machine's two cores are busy: vitest's 5 s default failed them under load.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          setupFiles,
          // One real control plane (etcd + kube-apiserver) serves the whole run.
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // Files share one apiserver; each works in its own namespace, but two
          // cores cannot run many operators at once without timing noise.
          fileParallelism: false,
        },
      },
      {
        // The oldest supported minor (npm run test:compat sets EO_KUBE_RELEASE=1.35): install of the CRDs (their
        // CEL rules and ratcheting too) and webhooks, every example Ready (under the chart's RBAC too), conversion, and the gateway call path.
        test: {
          name: 'compat',
          include: [
            'test/integration/control-plane/control-plane.test.ts',
            'test/integration/control-plane/cluster.test.ts',
            'test/integration/webhook/webhook.test.ts',
            'test/integration/webhook/apiserver-alone.test.ts',
            'test/integration/reconcilers/prediction.test.ts',
            'test/integration/reconcilers/registry.test.ts',
            'test/integration/registry/registry.test.ts',
            'test/integration/deploy/rbac.test.ts',
            'test/integration/gateway/calls.test.ts',
          ],
          environment: 'node',
          setupFiles,
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 900_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
