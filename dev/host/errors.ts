/**
 * The one error type of the local control plane. Every failure a user can hit (not root, Debian unreachable,
 * the Go build failing, a port taken, the apiserver not ready) carries a sentence saying what to do and,
 * where a tool wrote one, the path of its full log, because the interesting part of a Go build or an
 * apiserver crash is never in the last line.
 */
export class ControlPlaneError extends Error {
  override readonly name = 'ControlPlaneError';
  constructor(
    message: string,
    readonly logPath?: string,
  ) {
    super(logPath === undefined ? message : `${message}\n  full log: ${logPath}`);
  }
}
