/**
 * Debian's tools the tests drive, installed on first use like the control plane's packages (dev/host/apt.ts):
 * curl, for how a real client meets the gateway's HTTP behaviour (`Expect: 100-continue`, early answers), and
 * h2load (test/support/h2load.ts).
 */
import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ensureDebianPackages, whichOnPath } from '../../dev/host/apt.js';
import { ControlPlaneError } from '../../dev/host/errors.js';
import { cacheRoot } from '../../dev/host/paths.js';

/** The path of `binary`, installing the Debian package `pkg` first when it is not on PATH (or /usr/bin). */
export async function ensureDebianTool(
  pkg: string,
  binary: string,
  log: (line: string) => void = (line) => console.log(`[${binary}] ${line}`),
): Promise<string> {
  const path = `${process.env['PATH'] ?? ''}${delimiter}/usr/bin`;
  const found = await whichOnPath(binary, path);
  if (found !== undefined) return found;
  const logs = join(cacheRoot(), 'logs');
  await mkdir(logs, { recursive: true });
  const logFile = join(logs, `${binary}-install.log`);
  await ensureDebianPackages([pkg], log, logFile);
  const installed = await whichOnPath(binary, path);
  if (installed === undefined)
    throw new ControlPlaneError(`the ${pkg} package is installed but ${binary} was not found`, logFile);
  return installed;
}

export function ensureCurl(log?: (line: string) => void): Promise<string> {
  return ensureDebianTool('curl', 'curl', log);
}
