import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          // One real control plane (etcd + kube-apiserver) serves the whole run.
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // Files share one apiserver; each works in its own namespace, but two
          // cores cannot run many operators at once without timing noise.
          fileParallelism: false,
        },
      },
    ],
  },
});
