import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/resolve.js';
import { callMain } from '../../support/cli.js';

describe('endpoint-operator resolve: refusals that need no cluster', () => {
  it('prints its help', async () => {
    const r = await callMain(main, ['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: endpoint-operator resolve NAME');
  });

  it('needs NAME', async () => {
    const r = await callMain(main, ['--filter', 'port=80']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NAME is required');
  });

  it('refuses a filter syntax error with its position, before reading the cluster', async () => {
    const r = await callMain(main, [
      'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout',
      '--filter',
      'port=80 OR',
      '--kubeconfig',
      '/nonexistent',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--filter: invalid filter at position 11: expected a field');
  });

  it('refuses an unknown output format', async () => {
    const r = await callMain(main, [
      'projects/my-shop/locations/us-east1/namespaces/shop/services/checkout',
      '--output',
      'yaml',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--output');
  });
});
