import { describe, expect, it } from 'vitest';
import { freeSlot, inModelHost, nodeAddress, podCidr, SIMULATED_RANGE } from '../../../../dev/cluster/network.js';

describe('the local cluster addresses', () => {
  it('puts pods and nodes inside the unreachable range, one /24 of pods per node', () => {
    expect(SIMULATED_RANGE).toBe('198.18.0.0/15');
    expect(podCidr(0)).toBe('198.18.0.0/24');
    expect(podCidr(19)).toBe('198.18.19.0/24');
    expect(nodeAddress(1)).toBe('198.19.16.2');
  });

  it('takes the lowest /30 model host slot no link on this machine uses', () => {
    expect(freeSlot('')).toBe(0);
    const used =
      '5: eoh1 inet 198.19.255.1/30 scope global eoh1\n7: eoh2 inet 198.19.255.9/30 scope global eoh2\n2: eth0 inet 192.0.2.2/24 scope global eth0';
    expect(freeSlot(used)).toBe(1);
    expect(freeSlot('inet 198.19.255.1/30\ninet 198.19.255.5/30', 2)).toBeUndefined();
  });

  it('runs a command in the model host with ip netns exec, which execs it', () => {
    expect(inModelHost({ netns: 'eo-ab' }, '/usr/bin/node', ['-e', '1'])).toEqual([
      'ip',
      ['netns', 'exec', 'eo-ab', '/usr/bin/node', '-e', '1'],
    ]);
  });
});
