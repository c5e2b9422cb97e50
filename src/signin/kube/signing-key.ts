import type { JWK } from 'jose';
import { isAlreadyExists, isConflict } from '../../kube/api-error.js';
import { Informer, kubeListerWatcher } from '../../kube/informer.js';
import type { KubeClient } from '../../kube/kube-client.js';
import type { KubeObject } from '../../api/common/kube-object.js';
import { silentLogger, type Logger } from '../../base/logger.js';
import {
  generatePrivateJwk,
  publicJwkOf,
  signingKeyFromJwk,
  type SigningKeys,
  type SigningKeyStore,
} from '../signing-key.js';
import { posResources, SIGNIN_FIELD_MANAGER } from './resources.js';

/** The signing-key Secret's default name (the Role may update only this Secret). */
export const SIGNIN_KEY_SECRET = 'endpoint-operator-signin-key';
export const SIGNING_KEY_DATA_KEY = 'signing-key.jwk';
/** The public JWK of the key the last rotation replaced (verification only). */
export const PREVIOUS_KEY_DATA_KEY = 'previous-key.jwk';
/** Set it (to any new value, e.g. a timestamp) to ask for a rotation; one replica performs it. */
export const ROTATE_ANNOTATION = 'pos.endpoint-operator.dev/rotate-signing-key';
/** The value of ROTATE_ANNOTATION the last rotation answered, and when it happened. */
export const ROTATED_ANNOTATION = 'pos.endpoint-operator.dev/rotated';
export const ROTATED_AT_ANNOTATION = 'pos.endpoint-operator.dev/rotated-at';

/**
 * The Ed25519 signing keys in a Secret shared by every replica. The first replica to start creates
 * it; a replica that loses that race gets 409 AlreadyExists and reads the winner's key, so all
 * replicas sign with, and publish, the same key.
 *
 * Rotation: `kubectl annotate secret endpoint-operator-signin-key pos.endpoint-operator.dev/rotate-signing-key="$(date -u +%FT%TZ)" --overwrite`.
 * Every replica watches the Secret; the first to see the request writes a new key and keeps the old
 * one's public part (a PUT with the read resourceVersion, so exactly one replica rotates), and every
 * replica then signs with the new key and verifies and publishes both. The old key is dropped by the
 * next rotation, so wait at least an access-token lifetime (15 minutes) between two.
 */
export class KubernetesSigningKeyStore implements SigningKeyStore {
  private keys: Promise<SigningKeys> | undefined;
  private currentKid: string | undefined;
  private readonly listeners = new Set<(keys: SigningKeys) => void>();

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly secretName = SIGNIN_KEY_SECRET,
    private readonly log: Logger = silentLogger,
  ) {}

  load(): Promise<SigningKeys> {
    this.keys ??= this.loadOrCreate()
      .then((keys) => {
        this.currentKid = keys.current.kid;
        return keys;
      })
      .catch((err: unknown) => {
        this.keys = undefined; // let the next call retry
        throw err;
      });
    return this.keys;
  }

  onChange(listener: (keys: SigningKeys) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Watches the Secret until `signal` aborts: picks up rotations, and performs the ones asked for. */
  watch(signal: AbortSignal): Promise<boolean> {
    const informer = new Informer(
      kubeListerWatcher(this.client, posResources.secrets, this.namespace, {
        fieldSelector: `metadata.name=${this.secretName}`,
      }),
      {
        name: `signing-key secret ${this.namespace}/${this.secretName}`,
        logger: this.log,
      },
    );
    const changed = (secret: KubeObject): void => {
      this.observe(secret).catch((err: unknown) =>
        this.log.warn(
          { err },
          'applying or rotating the sign-in signing key failed; retried on the next change of the Secret',
        ),
      );
    };
    informer.addEventHandler({ onAdd: changed, onUpdate: (_, s) => changed(s) });
    void informer.run(signal);
    return informer.waitForSync(signal);
  }

  private async observe(secret: KubeObject): Promise<void> {
    const requested = secret.metadata.annotations?.[ROTATE_ANNOTATION];
    if (requested !== undefined && requested !== secret.metadata.annotations?.[ROTATED_ANNOTATION]) {
      await this.rotate(secret, requested);
      return; // the update it wrote comes back through the watch
    }
    const keys = await keysOf(secret, `${this.namespace}/${this.secretName}`);
    if (keys.current.kid === this.currentKid) return;
    this.currentKid = keys.current.kid;
    this.keys = Promise.resolve(keys);
    this.log.info({ kid: keys.current.kid, previous: keys.previous.map((k) => k.kid) }, 'sign-in signing key changed');
    for (const l of this.listeners) l(keys);
  }

  private async rotate(secret: KubeObject, requested: string): Promise<void> {
    const current = readJwk(secret, SIGNING_KEY_DATA_KEY, `${this.namespace}/${this.secretName}`);
    const next = await generatePrivateJwk();
    const body: KubeObject = {
      ...secret,
      metadata: {
        ...secret.metadata,
        annotations: {
          ...secret.metadata.annotations,
          [ROTATED_ANNOTATION]: requested,
          [ROTATED_AT_ANNOTATION]: new Date().toISOString(),
        },
      },
      data: {
        ...(secret.data as Record<string, string> | undefined),
        [SIGNING_KEY_DATA_KEY]: Buffer.from(JSON.stringify(next)).toString('base64'),
        [PREVIOUS_KEY_DATA_KEY]: Buffer.from(JSON.stringify(publicJwkOf(current))).toString('base64'),
      },
    };
    try {
      await this.client.replace(posResources.secrets, this.namespace, this.secretName, body, {
        fieldManager: SIGNIN_FIELD_MANAGER,
      });
      this.log.info({ kid: next.kid, replaced: current.kid }, 'rotated the sign-in signing key');
    } catch (err) {
      if (!isConflict(err)) throw err; // another replica rotated first
    }
  }

  private async loadOrCreate(): Promise<SigningKeys> {
    const existing = await this.read();
    if (existing) return existing;
    const jwk = await generatePrivateJwk();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: this.secretName,
        labels: { 'app.kubernetes.io/name': 'endpoint-operator', 'app.kubernetes.io/component': 'signin' },
      },
      type: 'Opaque',
      data: { [SIGNING_KEY_DATA_KEY]: Buffer.from(JSON.stringify(jwk)).toString('base64') },
    };
    try {
      await this.client.create(posResources.secrets, this.namespace, secret, { fieldManager: SIGNIN_FIELD_MANAGER });
      return { current: await signingKeyFromJwk(jwk), previous: [] };
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const winner = await this.read();
      if (!winner)
        throw new Error(
          `Secret ${this.namespace}/${this.secretName} was created by another replica but cannot be read`,
        );
      return winner;
    }
  }

  private async read(): Promise<SigningKeys | undefined> {
    const secret = await this.client.get<KubeObject>(posResources.secrets, this.namespace, this.secretName);
    return secret ? keysOf(secret, `${this.namespace}/${this.secretName}`) : undefined;
  }
}

function readJwk(secret: KubeObject, key: string, where: string): JWK {
  const raw = (secret.data as Record<string, string> | undefined)?.[key];
  if (raw === undefined) throw new Error(`Secret ${where} has no ${key} key; delete it to have a new key made`);
  return JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as JWK;
}

async function keysOf(secret: KubeObject, where: string): Promise<SigningKeys> {
  const current = await signingKeyFromJwk(readJwk(secret, SIGNING_KEY_DATA_KEY, where));
  const hasPrevious = (secret.data as Record<string, string> | undefined)?.[PREVIOUS_KEY_DATA_KEY] !== undefined;
  return { current, previous: hasPrevious ? [publicJwkOf(readJwk(secret, PREVIOUS_KEY_DATA_KEY, where))] : [] };
}
