import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { signalGroup } from './child-process-group.js';
import { capture } from './exec.js';
import { pidAlive } from './file-lock.js';
import { removeModelHost } from '../cluster/network.js';

/**
 * Pid files of running control planes. Each start writes one record; the next start, in any process, ends
 * the children of records whose owner died without stopping them (SIGKILL of a test runner where the
 * watchdog was killed too, a reboot of a container that kept /root) and removes their temporary data.
 */
export interface RunRecord {
  readonly ownerPid: number;
  readonly startedAt: string;
  readonly dataDir: string;
  /** True when the data dir is a temporary one this run created, so cleanup may delete it. */
  readonly removeDataDir: boolean;
  /**
   * Each child (etcd, kube-apiserver and their watchdogs) leads its own process group (pid = pgid);
   * `executable` (a path, or the watchdog's name) guards against a reused pid.
   */
  readonly children: readonly { readonly name: string; readonly pid: number; readonly executable: string }[];
  /** The run's model host (network.ts): its namespace and veth pair go with it. */
  readonly network?: { readonly netns: string; readonly hostLink: string };
  /** The real node's clean-up script (node-cleanup.ts), run after the children are gone. */
  readonly cleanupScript?: string;
}

/** A child of a run whose owner died, still running. */
export interface StaleProcess {
  readonly pid: number;
  readonly name: string;
  /** The dead owner's pid. */
  readonly owner: number;
}

export interface StaleCleanupPlan {
  /** Process groups to kill, with why. */
  readonly kill: readonly StaleProcess[];
  readonly removeFiles: readonly string[];
  readonly removeDirs: readonly string[];
  readonly removeNetworks: readonly { readonly netns: string; readonly hostLink: string }[];
  readonly runScripts: readonly string[];
}

/**
 * Decides what to clean up, given the records found (undefined = unreadable file), whether a pid is alive and
 * its command line. Pure, so the rules are unit-tested: only a record whose owner is dead is touched, and a
 * live pid is killed only when its command line still names the executable we started (pids get reused).
 */
export function planStaleCleanup(
  records: readonly { readonly file: string; readonly record: RunRecord | undefined }[],
  isAlive: (pid: number) => boolean,
  cmdlineOf: (pid: number) => string | undefined,
): StaleCleanupPlan {
  const kill: StaleProcess[] = [];
  const removeFiles: string[] = [];
  const removeDirs: string[] = [];
  const removeNetworks: { netns: string; hostLink: string }[] = [];
  const runScripts: string[] = [];
  for (const { file, record } of records) {
    if (record === undefined) {
      removeFiles.push(file);
      continue;
    }
    if (isAlive(record.ownerPid)) continue;
    for (const c of record.children) {
      if (!isAlive(c.pid)) continue;
      if (!(cmdlineOf(c.pid) ?? '').includes(basename(c.executable))) continue;
      kill.push({ pid: c.pid, name: c.name, owner: record.ownerPid });
    }
    removeFiles.push(file);
    if (record.removeDataDir) removeDirs.push(record.dataDir);
    if (record.network !== undefined) removeNetworks.push(record.network);
    if (record.cleanupScript !== undefined) runScripts.push(record.cleanupScript);
  }
  return { kill, removeFiles, removeDirs, removeNetworks, runScripts };
}

export function decodeRunRecord(text: string): RunRecord | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null) return undefined;
    const r = value as Record<string, unknown>;
    if (typeof r['ownerPid'] !== 'number' || typeof r['dataDir'] !== 'string' || !Array.isArray(r['children']))
      return undefined;
    const children = r['children'].filter(
      (c: unknown): c is RunRecord['children'][number] =>
        typeof c === 'object' &&
        c !== null &&
        typeof (c as Record<string, unknown>)['pid'] === 'number' &&
        typeof (c as Record<string, unknown>)['executable'] === 'string',
    );
    const network = r['network'] as Record<string, unknown> | undefined;
    return {
      ...(typeof network?.['netns'] === 'string' && typeof network['hostLink'] === 'string'
        ? { network: { netns: network['netns'], hostLink: network['hostLink'] } }
        : {}),
      ...(typeof r['cleanupScript'] === 'string' ? { cleanupScript: r['cleanupScript'] } : {}),
      ownerPid: r['ownerPid'],
      startedAt: typeof r['startedAt'] === 'string' ? r['startedAt'] : '',
      dataDir: r['dataDir'],
      removeDataDir: r['removeDataDir'] === true,
      children: children.map((c) => ({ name: String(c.name), pid: c.pid, executable: c.executable })),
    };
  } catch {
    return undefined;
  }
}

function procCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return undefined;
  }
}

/**
 * One line for what a start ended of runs killed with their watchdogs (a SIGKILL of the whole test runner), or
 * undefined when it ended nothing.
 */
export function staleRunsLine(ended: readonly StaleProcess[]): string | undefined {
  if (ended.length === 0) return undefined;
  const owners = [...new Set(ended.map((p) => p.owner))];
  return (
    `ended what ${owners.length === 1 ? 'a killed run' : `${owners.length} killed runs`} (pid ${owners.join(', ')}) left running: ` +
    `${ended.map((p) => `${p.name} ${p.pid}`).join(', ')}; their network namespaces, mounts and cgroups are gone too`
  );
}

/** Applies planStaleCleanup to the records in `dir`; returns what it killed, for the log (staleRunsLine). */
export async function cleanupStaleRuns(dir: string): Promise<StaleProcess[]> {
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.json'));
  const records = await Promise.all(
    files.map(async (f) => ({
      file: join(dir, f),
      record: decodeRunRecord(await readFile(join(dir, f), 'utf8').catch(() => '')),
    })),
  );
  const plan = planStaleCleanup(records, pidAlive, procCmdline);
  for (const k of plan.kill) signalGroup(k.pid, 'SIGKILL');
  for (const f of plan.removeFiles) await rm(f, { force: true });
  for (const d of plan.removeDirs) await rm(d, { recursive: true, force: true });
  for (const n of plan.removeNetworks) await removeModelHost(n);
  // Idempotent, and a no-op when the watchdog already ran it (it removes the script).
  for (const script of plan.runScripts) {
    if (!existsSync(script)) continue;
    await capture('/bin/bash', [script]);
    await rm(script, { force: true });
  }
  return [...plan.kill];
}

/** True when a record in `dir` other than `ownFile` belongs to a live process: another cluster is running. */
export async function otherLiveRuns(dir: string, ownFile: string | undefined): Promise<boolean> {
  for (const f of await readdir(dir).catch(() => [] as string[])) {
    if (!f.endsWith('.json') || join(dir, f) === ownFile) continue;
    const record = decodeRunRecord(await readFile(join(dir, f), 'utf8').catch(() => ''));
    if (record !== undefined && pidAlive(record.ownerPid)) return true;
  }
  return false;
}

/** Writes (or rewrites) this run's record; returns its path. */
export async function writeRunRecord(dir: string, record: RunRecord, file?: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = file ?? join(dir, `${record.ownerPid}-${randomBytes(4).toString('hex')}.json`);
  await writeFile(path, `${JSON.stringify(record, null, 2)}\n`);
  return path;
}
