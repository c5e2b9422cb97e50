/**
 * Listening sockets inside a model host (network.ts) for servers that run in this process: a small Node child
 * started in the host's namespace opens each socket there and passes it back over the IPC channel (as the
 * cluster module shares a server), so `server.listen(socket)` serves at the host's address from this event
 * loop. The child lives as long as this process's IPC channel: it exits when the channel closes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Server } from 'node:net';
import { ControlPlaneError } from '../host/errors.js';
import { inModelHost, type ModelHost } from './network.js';

/** CommonJS, run with `node -e`: nothing to resolve from the child's point of view. */
const OPENER = `
const net = require('node:net');
process.on('message', (m) => {
  const s = net.createServer();
  s.once('error', (err) => process.send({ id: m.id, error: err.message }));
  s.listen({ host: m.host, port: m.port, exclusive: true }, () => process.send({ id: m.id, port: s.address().port }, s, () => s.close()));
});
process.on('disconnect', () => process.exit(0));
`;

interface Answer {
  readonly id: number;
  readonly port?: number;
  readonly error?: string;
}

const openers = new Map<
  string,
  { child: ChildProcess; next: number; waiting: Map<number, (answer: Answer, socket: Server | undefined) => void> }
>();

function opener(host: Pick<ModelHost, 'netns'>): NonNullable<ReturnType<typeof openers.get>> {
  const existing = openers.get(host.netns);
  if (existing !== undefined && existing.child.exitCode === null && existing.child.connected) return existing;
  const [cmd, args] = inModelHost(host, process.execPath, ['-e', OPENER]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const entry = { child, next: 1, waiting: new Map<number, (answer: Answer, socket: Server | undefined) => void>() };
  child.on('message', (answer: Answer, socket: Server | undefined) => {
    entry.waiting.get(answer.id)?.(answer, socket);
    entry.waiting.delete(answer.id);
    // Only an open request keeps this process alive for the channel.
    if (entry.waiting.size === 0) child.channel?.unref();
  });
  child.on('exit', (code) => {
    for (const done of entry.waiting.values())
      done({ id: 0, error: `the socket opener in ${host.netns} exited (${String(code)})` }, undefined);
    entry.waiting.clear();
    openers.delete(host.netns);
  });
  // Neither the child nor its channel may keep this process alive.
  child.unref();
  child.channel?.unref();
  openers.set(host.netns, entry);
  return entry;
}

/** A socket listening at `host.address:port` (0: any free port) in the model host, for `server.listen(socket)`. */
export function listenInModelHost(host: Pick<ModelHost, 'netns' | 'address'>, port = 0): Promise<Server> {
  const entry = opener(host);
  const id = entry.next++;
  return new Promise((resolve, reject) => {
    entry.waiting.set(id, (answer, socket) => {
      if (socket !== undefined && answer.port !== undefined) resolve(socket);
      else
        reject(
          new ControlPlaneError(
            `cannot listen on ${host.address}:${port} in ${host.netns}: ${answer.error ?? 'no socket came back'}`,
          ),
        );
    });
    entry.child.channel?.ref();
    entry.child.send({ id, host: host.address, port });
  });
}
