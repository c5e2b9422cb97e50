import { describe, expect, it } from 'vitest';
import { main as devMain } from '../../dev/main.js';
import { main } from '../../src/main.js';
import { callMain } from '../support/cli.js';

describe('the two binaries', () => {
  it('the product lists no development command, and points at the development binary when asked for one', async () => {
    const help = await callMain(main, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: endpoint-operator <command>');
    expect(help.stdout).toMatch(/^ {2}run /m);
    expect(help.stdout).not.toMatch(/^ {2}(dev|cluster) /m);

    const dev = await callMain(main, ['dev']);
    expect(dev.code).toBe(2);
    expect(dev.stderr).toBe(
      'endpoint-operator: "dev" is part of the development tree (dev/), not of this binary: in a checkout, run `npm start` (endpoint-operator-dev start)\n',
    );
    const unknown = await callMain(main, ['nope']);
    expect(unknown.stderr).toContain('endpoint-operator: unknown command "nope"');
  });

  it('the development binary lists start and cluster', async () => {
    const help = await callMain(devMain, ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: endpoint-operator-dev <command>');
    expect(help.stdout).toMatch(/^ {2}start /m);
    expect(help.stdout).toMatch(/^ {2}cluster /m);
  });
});
