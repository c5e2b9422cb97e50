/** Checks on a program a test starts on this machine: is it still running, does its port accept connections. */
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

export function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** True once something listens on 127.0.0.1:`port` (or `host`:`port`). */
export function acceptsOnLoopback(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}
