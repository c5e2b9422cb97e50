import { describe, expect, it } from 'vitest';
import {
  decodeProcAddress,
  diskSpaceLine,
  listenersBlocking,
  NODE_FIXED_PORTS,
  portTakenLine,
} from '../../../../../dev/cluster/real-node/node-preflight.js';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
/** A /proc/net/tcp line: `local` as the kernel writes it, state 0A = LISTEN, 01 = ESTABLISHED. */
const row = (local: string, state: string, inode: string): string =>
  `   0: ${local} 00000000:0000 ${state} 00000000:00000000 00:00000000 00000000     0        0 ${inode} 1 0000000000000000 100 0 0 10 0`;

describe("the real node's preflight", () => {
  it("decodes the kernel's addresses", () => {
    expect(decodeProcAddress('0100007F')).toBe('127.0.0.1');
    expect(decodeProcAddress('01FE13C6')).toBe('198.19.254.1');
    expect(decodeProcAddress('00000000000000000000000000000000')).toBe('0:0:0:0:0:0:0:0');
    expect(decodeProcAddress('0000000000000000FFFF000001FE13C6')).toBe('::ffff:198.19.254.1');
  });

  it('finds a listener on the port where a bind would collide: the address itself or a wildcard', () => {
    const tcp = [
      HEADER,
      row('0100007F:1388', '0A', '111'), // 127.0.0.1:5000: no clash with the registry's 198.19.254.1:5000
      row('00000000:1388', '0A', '222'), // 0.0.0.0:5000: clashes
      row('01FE13C6:1388', '01', '333'), // an established connection, not a listener
      row('0100007F:280A', '0A', '444'), // 127.0.0.1:10250
    ].join('\n');
    expect(listenersBlocking(tcp, '198.19.254.1', 5000)).toEqual(['222']);
    expect(listenersBlocking(tcp, '127.0.0.1', 10250)).toEqual(['444']);
    expect(listenersBlocking(tcp, '127.0.0.1', 10256)).toEqual([]);
    const tcp6 = [HEADER, row('00000000000000000000000000000000:1388', '0A', '555')].join('\n');
    expect(listenersBlocking(tcp6, '198.19.254.1', 5000)).toEqual(['555']);
  });

  it("tells a killed run's daemon from another program, each line with its fix", () => {
    const registry = NODE_FIXED_PORTS.find((p) => p.port === 5000);
    if (registry === undefined) throw new Error('no registry port');
    const bin = '/root/.cache/endpoint-operator/bin';
    expect(
      portTakenLine(registry, { pid: 42, exe: `${bin}/registry-v3.1.2-x/registry`, command: 'registry serve' }, bin),
    ).toBe(
      "port 5000 on 198.19.254.1 (the real node's image registry) is held by pid 42 (registry serve), left by a real node whose run was killed: end it with `kill 42` and start again",
    );
    expect(portTakenLine(registry, { pid: 7, exe: '/usr/bin/python3', command: 'python3 -m flask run' }, bin)).toBe(
      "port 5000 on 198.19.254.1 (the real node's image registry) is in use by pid 7 (python3 -m flask run): stop that program (the port is fixed), or start with --simulated-nodes",
    );
    expect(portTakenLine(registry, undefined, bin)).toMatch(/in use by a process this user cannot see/);
  });

  it('refuses a disk with less free space than the images need, naming what can be deleted', () => {
    expect(diskSpaceLine('/c', 3e9, ['/c/a'])).toBeUndefined();
    expect(diskSpaceLine('/c', 0.4e9, ['/c/real-node-images', '/c/registry'])).toBe(
      "only 0.4 GB free on the file system of /c (the real node's images need 2.1 GB): free space there (the kept image stores can go: rm -rf /c/real-node-images /c/registry), or start with --simulated-nodes",
    );
  });
});
