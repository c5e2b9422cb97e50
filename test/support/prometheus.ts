/**
 * Debian's `prometheus` package (prometheus and promtool), installed on first use like the control
 * plane's packages: the alert and dashboard tests drive the real tools, never an imitation.
 */
import { mkdir } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { ensureDebianPackages, whichOnPath } from '../../dev/host/apt.js';
import { ControlPlaneError } from '../../dev/host/errors.js';
import { cacheRoot } from '../../dev/host/paths.js';

export const PROMETHEUS_PACKAGES = ['prometheus'] as const;

export interface PrometheusTools {
  readonly prometheus: string;
  readonly promtool: string;
}

export async function ensurePrometheus(
  log: (line: string) => void = (line) => console.log(`[prometheus] ${line}`),
): Promise<PrometheusTools> {
  const logs = join(cacheRoot(), 'logs');
  await mkdir(logs, { recursive: true });
  const logFile = join(logs, 'prometheus-install.log');
  const path = `${process.env['PATH'] ?? ''}${delimiter}/usr/bin`;
  let prometheus = await whichOnPath('prometheus', path);
  let promtool = await whichOnPath('promtool', path);
  if (prometheus === undefined || promtool === undefined) {
    await ensureDebianPackages(PROMETHEUS_PACKAGES, log, logFile);
    prometheus = await whichOnPath('prometheus', path);
    promtool = await whichOnPath('promtool', path);
  }
  if (prometheus === undefined || promtool === undefined)
    throw new ControlPlaneError(
      'the prometheus package is installed but prometheus or promtool was not found',
      logFile,
    );
  return { prometheus, promtool };
}
