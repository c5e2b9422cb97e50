/**
 * Debian's curl, installed on first use like the control plane's packages: the tests that check how a
 * real client meets the gateway's HTTP behaviour (`Expect: 100-continue`, early answers) drive it.
 */
import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ensureDebianPackages, whichOnPath } from '../../dev/host/apt.js';
import { ControlPlaneError } from '../../dev/host/errors.js';
import { cacheRoot } from '../../dev/host/paths.js';

export async function ensureCurl(
  log: (line: string) => void = (line) => console.log(`[curl] ${line}`),
): Promise<string> {
  const path = `${process.env['PATH'] ?? ''}${delimiter}/usr/bin`;
  const found = await whichOnPath('curl', path);
  if (found !== undefined) return found;
  const logs = join(cacheRoot(), 'logs');
  await mkdir(logs, { recursive: true });
  const logFile = join(logs, 'curl-install.log');
  await ensureDebianPackages(['curl'], log, logFile);
  const installed = await whichOnPath('curl', path);
  if (installed === undefined)
    throw new ControlPlaneError('the curl package is installed but curl was not found', logFile);
  return installed;
}
