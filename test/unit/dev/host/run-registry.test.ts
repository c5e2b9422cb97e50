import { describe, expect, it } from 'vitest';
import { decodeRunRecord, planStaleCleanup, staleRunsLine } from '../../../../dev/host/run-registry.js';
import type { RunRecord } from '../../../../dev/host/run-registry.js';
import { lockIsStale } from '../../../../dev/host/file-lock.js';

const record = (over: Partial<RunRecord> = {}): RunRecord => ({
  ownerPid: 100,
  startedAt: '2026-01-01T00:00:00Z',
  dataDir: '/tmp/eo-control-plane-x',
  removeDataDir: true,
  children: [
    { name: 'etcd', pid: 201, executable: '/usr/bin/etcd' },
    { name: 'etcd watchdog', pid: 202, executable: 'endpoint-operator-watchdog' },
    {
      name: 'kube-apiserver',
      pid: 203,
      executable: '/root/.cache/endpoint-operator/kube-apiserver-v1.20.2-ab/kube-apiserver',
    },
  ],
  ...over,
});

const cmdlines: Record<number, string> = {
  201: '/usr/bin/etcd --name=endpoint-operator-dev',
  202: '/bin/bash -c ... endpoint-operator-watchdog 100',
  203: '/root/.cache/endpoint-operator/kube-apiserver-v1.20.2-ab/kube-apiserver --etcd-servers=...',
};

describe('planStaleCleanup', () => {
  it('leaves the runs of live owners alone', () => {
    const plan = planStaleCleanup(
      [{ file: 'a.json', record: record() }],
      () => true,
      (pid) => cmdlines[pid],
    );
    expect(plan).toEqual({ kill: [], removeFiles: [], removeDirs: [], removeNetworks: [], runScripts: [] });
  });

  it('kills the live children of a dead owner and removes its record and temporary data', () => {
    const alive = new Set([201, 202, 203]);
    const plan = planStaleCleanup(
      [{ file: 'a.json', record: record() }],
      (pid) => alive.has(pid),
      (pid) => cmdlines[pid],
    );
    expect(plan.kill.map((k) => k.pid)).toEqual([201, 202, 203]);
    expect(plan.kill[0]).toMatchObject({ pid: 201, owner: 100 });
    expect(staleRunsLine(plan.kill)).toMatch(/^ended what a killed run \(pid 100\) left running: \S+ 201/);
    expect(plan.removeFiles).toEqual(['a.json']);
    expect(plan.removeDirs).toEqual(['/tmp/eo-control-plane-x']);
  });

  it('does not kill a reused pid whose command line is something else', () => {
    const plan = planStaleCleanup(
      [{ file: 'a.json', record: record() }],
      (pid) => pid === 201,
      () => '/usr/sbin/sshd -D',
    );
    expect(plan.kill).toEqual([]);
    expect(plan.removeFiles).toEqual(['a.json']);
  });

  it("runs a dead owner's clean-up script (its real node's), not a live one's", () => {
    const script = '/root/.cache/endpoint-operator/real-node/cleanup.sh';
    const dead = planStaleCleanup(
      [{ file: 'a.json', record: record({ cleanupScript: script }) }],
      () => false,
      () => undefined,
    );
    expect(dead.runScripts).toEqual([script]);
    const live = planStaleCleanup(
      [{ file: 'a.json', record: record({ cleanupScript: script }) }],
      () => true,
      () => undefined,
    );
    expect(live.runScripts).toEqual([]);
    expect(decodeRunRecord(JSON.stringify(record({ cleanupScript: script })))?.cleanupScript).toBe(script);
  });

  it('keeps a data dir the user chose', () => {
    const plan = planStaleCleanup(
      [{ file: 'a.json', record: record({ removeDataDir: false, dataDir: '/srv/dev' }) }],
      () => false,
      () => undefined,
    );
    expect(plan.removeDirs).toEqual([]);
  });

  it('removes unreadable records', () => {
    const plan = planStaleCleanup(
      [{ file: 'junk.json', record: undefined }],
      () => false,
      () => undefined,
    );
    expect(plan.removeFiles).toEqual(['junk.json']);
  });
});

describe('decodeRunRecord', () => {
  it('round-trips a record', () => {
    expect(decodeRunRecord(JSON.stringify(record()))).toEqual(record());
  });

  it('rejects what is not a record', () => {
    expect(decodeRunRecord('not json')).toBeUndefined();
    expect(decodeRunRecord('null')).toBeUndefined();
    expect(decodeRunRecord('{"ownerPid":"1","dataDir":"/x","children":[]}')).toBeUndefined();
  });

  it('drops malformed children but keeps the rest', () => {
    const decoded = decodeRunRecord(
      JSON.stringify({ ...record(), children: [{ pid: 'x' }, { name: 'etcd', pid: 5, executable: 'etcd' }] }),
    );
    expect(decoded?.children).toEqual([{ name: 'etcd', pid: 5, executable: 'etcd' }]);
  });
});

describe('lockIsStale', () => {
  it('is stale when the owner pid is gone or unreadable, held otherwise', () => {
    expect(lockIsStale('1234\n', () => true)).toBe(false);
    expect(lockIsStale('1234\n', () => false)).toBe(true);
    expect(lockIsStale('garbage', () => true)).toBe(true);
  });
});
