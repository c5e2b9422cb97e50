import type { JWK } from 'jose';
import { isAlreadyExists } from '../../runtime/api-error.js';
import type { KubeClient } from '../../runtime/kube-client.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import { generatePrivateJwk, signingKeyFromJwk, type SigningKey, type SigningKeyStore } from '../signing-key.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

export const SIGNING_KEY_DATA_KEY = 'signing-key.jwk';

/**
 * The Ed25519 signing key in a Secret shared by every replica. The first replica to start creates
 * it; a replica that loses that race gets 409 AlreadyExists and reads the winner's key, so all
 * replicas sign with, and publish, the same key.
 */
export class KubernetesSigningKeyStore implements SigningKeyStore {
  private key: Promise<SigningKey> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly secretName = 'endpoint-operator-signin-key',
  ) {}

  load(): Promise<SigningKey> {
    this.key ??= this.loadOrCreate().catch((err: unknown) => {
      this.key = undefined; // let the next call retry
      throw err;
    });
    return this.key;
  }

  private async loadOrCreate(): Promise<SigningKey> {
    const existing = await this.read();
    if (existing) return existing;
    const jwk = await generatePrivateJwk();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: this.secretName, labels: { 'app.kubernetes.io/name': 'endpoint-operator', 'app.kubernetes.io/component': 'signin' } },
      type: 'Opaque',
      data: { [SIGNING_KEY_DATA_KEY]: Buffer.from(JSON.stringify(jwk)).toString('base64') },
    };
    try {
      await this.client.create(posResources.secrets, this.namespace, secret, { fieldManager: SIGNIN_FIELD_MANAGER });
      return await signingKeyFromJwk(jwk);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const winner = await this.read();
      if (!winner) throw new Error(`Secret ${this.namespace}/${this.secretName} was created by another replica but cannot be read`);
      return winner;
    }
  }

  private async read(): Promise<SigningKey | undefined> {
    const secret = await this.client.get<KubeObject>(posResources.secrets, this.namespace, this.secretName);
    if (!secret) return undefined;
    const raw = (secret.data as Record<string, string> | undefined)?.[SIGNING_KEY_DATA_KEY];
    if (raw === undefined) throw new Error(`Secret ${this.namespace}/${this.secretName} has no ${SIGNING_KEY_DATA_KEY} key; delete it to have a new key made`);
    return signingKeyFromJwk(JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as JWK);
  }
}
