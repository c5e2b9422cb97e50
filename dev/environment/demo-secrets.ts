import { randomBytes } from 'node:crypto';
import { isRecord } from '../../src/api/common/text.js';
import { hashPassword, PASSWORD_SECRET_LABEL } from '../../src/signin/passwords.js';
import type { KubeObject } from '../../src/kube/kube-client.js';

export interface DemoSecret {
  readonly secret: KubeObject;
  /** Who signs in with it (for the printed hint). */
  readonly email: string;
  readonly kind: string;
}

/** A readable password for the demo users; a new one each `dev` run, never committed. */
export function demoPassword(): string {
  return `demo-${randomBytes(6).toString('base64url')}`;
}

/**
 * The password Secrets the example ShopUsers and AdminUsers reference, each holding an argon2id
 * PHC string of `password` (what `endpoint-operator hash-password` prints).
 */
export async function demoSecrets(objects: readonly unknown[], password: string): Promise<DemoSecret[]> {
  const out: DemoSecret[] = [];
  const seen = new Set<string>();
  const hash = await hashPassword(password);
  for (const obj of objects) {
    if (!isRecord(obj) || (obj.kind !== 'ShopUser' && obj.kind !== 'AdminUser')) continue;
    const meta = isRecord(obj.metadata) ? obj.metadata : {};
    const spec = isRecord(obj.spec) ? obj.spec : {};
    const ref = isRecord(spec.passwordSecretRef) ? spec.passwordSecretRef : undefined;
    const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
    if (!ref || typeof ref.name !== 'string') continue;
    const key = typeof ref.key === 'string' ? ref.key : 'password';
    const id = `${namespace}/${ref.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({
      kind: obj.kind,
      email: typeof spec.email === 'string' ? spec.email : '',
      secret: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: ref.name,
          namespace,
          labels: { 'app.kubernetes.io/managed-by': 'endpoint-operator-dev', [PASSWORD_SECRET_LABEL]: 'true' },
        },
        type: 'Opaque',
        stringData: { [key]: hash },
      },
    });
  }
  return out;
}
