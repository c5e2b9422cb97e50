/**
 * The gateway's serving certificate, read from files and followed as they change: the operator's (or
 * cert-manager's) Secret mounted as a volume, which kubelet updates in place on rotation. Kubelet writes a
 * Secret volume atomically (a new timestamped directory, then the `..data` symlink swapped to it), but a pair
 * copied by hand, or by an agent that writes one file after the other, is for a moment a new certificate with
 * the old key. So the pair is re-read every `pollIntervalMs` and taken only when Node accepts it as one
 * (`tls.createSecureContext` refuses unparsable PEM and a key that does not match the certificate); until then
 * the pair in use stays, and the refusal is logged once per refused content, not once per poll.
 *
 * Polling the contents, rather than `fs.watch`, follows every way the files can change (a symlink swap, an
 * in-place write, a bind mount replaced underneath) at the cost of reading two small files every few seconds.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { Gauge } from 'prom-client';
import type { Logger } from '../../base/logger.js';
import { metricsRegistry } from '../../base/metrics.js';

/** cert-manager's shape (`certmanager_certificate_expiration_timestamp_seconds`), as the webhook's. */
const certificateExpiry = new Gauge({
  name: 'endpoint_operator_gateway_certificate_expiration_timestamp_seconds',
  help: 'When the serving certificate this gateway replica presents expires (Unix seconds); a rotated Secret is picked up within seconds.',
  registers: [metricsRegistry],
});

function recordExpiry(pair: ServingCertificate): void {
  certificateExpiry.set(Date.parse(new X509Certificate(pair.cert).validTo) / 1000);
}

export interface ServingCertificate {
  /** PEM: the leaf first, then any intermediates. */
  readonly cert: string;
  readonly key: string;
}

export interface ServingCertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly log: Logger;
  /** Between two reads of the files; default 5 s (kubelet itself refreshes a mounted Secret about once a minute). */
  readonly pollIntervalMs?: number;
}

export interface ServingCertificateWatch {
  /** The pair in use: the last one that was whole. */
  current(): ServingCertificate;
  /** Called with each new whole pair (for `server.setSecureContext`); a listener that throws is logged, the others still run. */
  onChange(listener: (pair: ServingCertificate) => void): void;
  /** Reads the files now (what each poll does); true when a new pair was taken. */
  reload(): Promise<boolean>;
  /** Stops polling. */
  close(): Promise<void>;
}

export const DEFAULT_POLL_INTERVAL_MS = 5_000;

async function readPair(files: ServingCertificateFiles): Promise<ServingCertificate> {
  const [cert, key] = await Promise.all([readFile(files.certFile, 'utf8'), readFile(files.keyFile, 'utf8')]);
  return { cert, key };
}

/** Why Node would not serve with this pair, or undefined when it would. */
function refusal(pair: ServingCertificate): string | undefined {
  try {
    createSecureContext({ cert: pair.cert, key: pair.key });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const fingerprint = (pair: ServingCertificate): string =>
  createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');

/**
 * Reads the pair (which must be whole now: the gateway cannot serve TLS without it) and follows the files
 * until close().
 */
export async function watchServingCertificate(files: ServingCertificateFiles): Promise<ServingCertificateWatch> {
  const log = files.log.child({ certFile: files.certFile, keyFile: files.keyFile });
  let current = await readPair(files);
  const initialProblem = refusal(current);
  if (initialProblem !== undefined)
    throw new Error(
      `the serving certificate ${files.certFile} and key ${files.keyFile} are not a usable pair: ${initialProblem}`,
    );
  recordExpiry(current);
  let currentPrint = fingerprint(current);
  /** The content last refused (or unreadable), so it is logged once. */
  let refusedPrint: string | undefined;
  const listeners: ((pair: ServingCertificate) => void)[] = [];
  let reloading: Promise<boolean> | undefined;

  const check = async (): Promise<boolean> => {
    let pair: ServingCertificate;
    try {
      pair = await readPair(files);
    } catch (err) {
      const print = `unreadable:${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
      if (refusedPrint !== print)
        log.warn({ err: (err as Error).message }, 'serving certificate files unreadable; keeping the pair in use');
      refusedPrint = print;
      return false;
    }
    const print = fingerprint(pair);
    if (print === currentPrint) {
      refusedPrint = undefined;
      return false;
    }
    const problem = refusal(pair);
    if (problem !== undefined) {
      if (refusedPrint !== print)
        log.warn({ problem }, 'serving certificate files are not a usable pair (yet); keeping the pair in use');
      refusedPrint = print;
      return false;
    }
    current = pair;
    currentPrint = print;
    recordExpiry(pair);
    refusedPrint = undefined;
    log.info('serving certificate reloaded');
    for (const listener of listeners) {
      try {
        listener(pair);
      } catch (err) {
        log.error({ err: (err as Error).message }, 'serving certificate listener failed');
      }
    }
    return true;
  };
  // One read at a time: a slow disk must not let two polls race to install pairs out of order.
  const reload = (): Promise<boolean> => (reloading ??= check().finally(() => (reloading = undefined)));

  const timer = setInterval(() => void reload(), files.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  timer.unref();
  return {
    current: () => current,
    onChange: (listener) => listeners.push(listener),
    reload,
    close: async () => {
      clearInterval(timer);
      await reloading;
    },
  };
}
