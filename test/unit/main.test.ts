import { afterEach, describe, expect, it, vi } from 'vitest';
import { main as devMain } from '../../dev/main.js';
import { main } from '../../src/main.js';

/** What each binary printed on stderr and stdout during `run`. */
async function printed(run: () => Promise<number>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
  vi.spyOn(console, 'error').mockImplementation((line: string) => void err.push(line));
  const code = await run();
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the two binaries', () => {
  afterEach(() => vi.restoreAllMocks());

  it('the product lists no development command, and points at the development binary when asked for one', async () => {
    const help = await printed(() => main(['--help']));
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: endpoint-operator <command>');
    expect(help.out).toMatch(/^ {2}run /m);
    expect(help.out).not.toMatch(/^ {2}(dev|cluster) /m);

    const dev = await printed(() => main(['dev']));
    expect(dev.code).toBe(2);
    expect(dev.err).toBe(
      'endpoint-operator: "dev" is part of the development tree (dev/), not of this binary: in a checkout, run `npm start` (endpoint-operator-dev start)',
    );
    const unknown = await printed(() => main(['nope']));
    expect(unknown.err).toContain('endpoint-operator: unknown command "nope"');
  });

  it('the development binary lists start and cluster', async () => {
    const help = await printed(() => devMain(['--help']));
    expect(help.code).toBe(0);
    expect(help.out).toContain('Usage: endpoint-operator-dev <command>');
    expect(help.out).toMatch(/^ {2}start /m);
    expect(help.out).toMatch(/^ {2}cluster /m);
  });
});
