import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { renderKubeconfig } from '../../../../dev/cluster/kubeconfig.js';
import { randomToken, renderTokenFile } from '../../../../dev/cluster/credentials.js';

describe('renderKubeconfig', () => {
  it('names one cluster, user and current context, with the token and the CA embedded', () => {
    const caPem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const doc = load(renderKubeconfig({ server: 'https://127.0.0.1:40003', token: 'tok123', caPem })) as Record<
      string,
      unknown
    >;
    expect(doc['apiVersion']).toBe('v1');
    expect(doc['kind']).toBe('Config');
    const clusters = doc['clusters'] as { name: string; cluster: Record<string, string> }[];
    const users = doc['users'] as { name: string; user: Record<string, string> }[];
    const contexts = doc['contexts'] as { name: string; context: Record<string, string> }[];
    expect(clusters).toHaveLength(1);
    expect(clusters[0]?.cluster['server']).toBe('https://127.0.0.1:40003');
    expect(Buffer.from(clusters[0]?.cluster['certificate-authority-data'] ?? '', 'base64').toString()).toBe(caPem);
    expect(clusters[0]?.cluster['insecure-skip-tls-verify']).toBeUndefined();
    expect(users[0]?.user['token']).toBe('tok123');
    expect(doc['current-context']).toBe(contexts[0]?.name);
    expect(contexts[0]?.context).toMatchObject({ cluster: clusters[0]?.name, user: users[0]?.name });
  });
});

describe('renderTokenFile', () => {
  it('writes token,user,uid and the quoted group list the apiserver expects', () => {
    expect(
      renderTokenFile([
        { token: 'a1', user: 'admin', uid: 'admin', groups: ['system:masters'] },
        { token: 'b2', user: 'viewer', uid: 'v-1', groups: ['team-a', 'team-b'] },
        { token: 'c3', user: 'nobody', uid: 'n-1', groups: [] },
      ]),
    ).toBe('a1,admin,admin,"system:masters"\nb2,viewer,v-1,"team-a,team-b"\nc3,nobody,n-1\n');
  });

  it('refuses values that would break the CSV', () => {
    expect(() => renderTokenFile([{ token: 'a,b', user: 'u', uid: 'u', groups: [] }])).toThrow(/token/);
    expect(() => renderTokenFile([{ token: 't', user: 'u', uid: 'u', groups: ['g"'] }])).toThrow(/group/);
    expect(() => renderTokenFile([{ token: 't', user: '', uid: 'u', groups: [] }])).toThrow(/user/);
  });

  it('random tokens are long and distinct', () => {
    const a = randomToken();
    expect(a).toMatch(/^[0-9a-f]{48}$/);
    expect(randomToken()).not.toBe(a);
  });
});
