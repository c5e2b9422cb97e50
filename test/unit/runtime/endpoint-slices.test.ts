import { describe, expect, it } from 'vitest';
import {
  decodeEndpointSlice,
  decodeService,
  findServicePort,
  readyAddresses,
  type EndpointSlice,
} from '../../../src/runtime/endpoint-slices.js';
import type { KubeObject } from '../../../src/api/common/kube-object.js';

const slice = (name: string, body: Record<string, unknown>): EndpointSlice => {
  const decoded = decodeEndpointSlice({
    metadata: { name, labels: { 'kubernetes.io/service-name': 'fraud' } },
    ...body,
  } as KubeObject);
  if (decoded === undefined) throw new Error('did not decode');
  return decoded;
};

describe('EndpointSlices', () => {
  const service = decodeService({
    metadata: { name: 'fraud' },
    spec: {
      ports: [
        { name: 'http', port: 80 },
        { name: 'grpc', port: 9000 },
      ],
    },
  });

  it('finds a Service port by number or by name', () => {
    expect(service && findServicePort(service, 80)?.name).toBe('http');
    expect(service && findServicePort(service, 'grpc')?.port).toBe(9000);
    expect(service && findServicePort(service, 81)).toBeUndefined();
    expect(service?.selector).toBeUndefined();
  });

  it('lists ready addresses on the slice port named like the Service port, once each, skipping FQDN slices', () => {
    const a = slice('a', {
      addressType: 'IPv4',
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'grpc', port: 9001 },
      ],
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: true } },
        { addresses: ['10.0.0.2'], conditions: { ready: false } },
        { addresses: ['10.0.0.3'] }, // ready unset means ready
      ],
    });
    const b = slice('b', {
      addressType: 'IPv6',
      ports: [{ name: 'http', port: 8081 }],
      endpoints: [{ addresses: ['fd00::1'] }],
    });
    const dup = slice('dup', {
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080 }],
      endpoints: [{ addresses: ['10.0.0.1'] }],
    });
    const fqdn = slice('f', {
      addressType: 'FQDN',
      ports: [{ name: 'http', port: 80 }],
      endpoints: [{ addresses: ['x.example.com'] }],
    });
    const port = service && findServicePort(service, 80);
    if (port === undefined) throw new Error('no port');
    expect(readyAddresses([a, b, dup, fqdn], port)).toEqual([
      { address: '10.0.0.1', port: 8080, family: 'IPv4' },
      { address: '10.0.0.3', port: 8080, family: 'IPv4' },
      { address: 'fd00::1', port: 8081, family: 'IPv6' },
    ]);
  });

  it('decodes a malformed slice to undefined instead of throwing', () => {
    expect(decodeEndpointSlice({ metadata: {}, addressType: 'bogus' })).toBeUndefined();
    expect(decodeService({ metadata: {}, spec: 'x' })).toBeUndefined();
  });
});
