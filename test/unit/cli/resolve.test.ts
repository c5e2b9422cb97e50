import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/resolve.js';

describe('endpoint-operator resolve: refusals that need no cluster', () => {
  afterEach(() => vi.restoreAllMocks());

  async function run(argv: string[]): Promise<{ code: number; stderr: string; stdout: string }> {
    const err = vi.spyOn(console, 'error').mockImplementation(() => {});
    const out = vi.spyOn(console, 'log').mockImplementation(() => {});
    const code = await main(argv);
    return {
      code,
      stderr: err.mock.calls.map((c) => String(c[0])).join('\n'),
      stdout: out.mock.calls.map((c) => String(c[0])).join('\n'),
    };
  }

  it('prints its help', async () => {
    const r = await run(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: endpoint-operator resolve NAME');
  });

  it('needs NAME', async () => {
    const r = await run(['--filter', 'port=80']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('NAME is required');
  });

  it('refuses a filter syntax error with its position, before reading the cluster', async () => {
    const r = await run([
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
    const r = await run(['projects/my-shop/locations/us-east1/namespaces/shop/services/checkout', '--output', 'yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--output');
  });
});
