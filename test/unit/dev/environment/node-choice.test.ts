import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../../src/cli/flags.js';
import { chooseNodes, type NodeChoiceInput } from '../../../../dev/environment/node-choice.js';

const FIT: NodeChoiceInput = {
  simulatedNodes: false,
  realNode: false,
  existingCluster: false,
  root: true,
  blocker: undefined,
  owner: undefined,
  waitSeconds: 0,
};

describe('which nodes npm start runs', () => {
  it('runs the real node by default where the machine can, and with --real-node', () => {
    expect(chooseNodes(FIT)).toEqual({ kind: 'real', waitMs: 0 });
    expect(chooseNodes({ ...FIT, realNode: true })).toEqual({ kind: 'real', waitMs: 0 });
    expect(chooseNodes({ ...FIT, owner: 9, waitSeconds: 60 })).toEqual({ kind: 'real', waitMs: 60_000 });
  });

  it('runs simulated nodes when asked, on an existing cluster, and without root (whose own check speaks)', () => {
    for (const i of [{ simulatedNodes: true }, { existingCluster: true }, { root: false, blocker: 'not root (uid 5)' }])
      expect(chooseNodes({ ...FIT, ...i })).toEqual({ kind: 'simulated', line: undefined });
  });

  it('falls back in one line saying why and how to get the real node', () => {
    const c = chooseNodes({ ...FIT, blocker: 'no writable memory cgroup' });
    expect(c.kind).toBe('simulated');
    const line = c.kind === 'simulated' ? (c.line ?? '') : '';
    expect(line).not.toContain('\n');
    expect(line).toMatch(
      /^no real node: no writable memory cgroup, so the Nodes are simulated by kwok .*; for a real node run as root with writable cgroups/,
    );
    const taken = chooseNodes({ ...FIT, owner: 4242 });
    expect(taken).toMatchObject({
      kind: 'simulated',
      line: expect.stringMatching(/pid 4242's local cluster has .* --real-node-wait SECONDS$/),
    });
  });

  it('refuses instead of falling back when --real-node insists', () => {
    expect(chooseNodes({ ...FIT, realNode: true, blocker: 'the kernel has no overlayfs' })).toEqual({
      kind: 'refused',
      line: expect.stringMatching(
        /^--real-node: this machine cannot run the real node: the kernel has no overlayfs; it needs /,
      ),
    });
    // Another cluster's node: startControlPlane refuses, naming its owner.
    expect(chooseNodes({ ...FIT, realNode: true, owner: 4242 })).toEqual({ kind: 'real', waitMs: 0 });
    expect(() => chooseNodes({ ...FIT, realNode: true, simulatedNodes: true })).toThrow(UsageError);
  });
});
