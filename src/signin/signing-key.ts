import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

/** The Ed25519 key that signs every token, as stored (private JWK) and as used. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

/**
 * The keys in use: `current` signs; during a rotation the key it replaced stays in `previous` (public
 * part only) so tokens it signed still verify and the JWKS publishes both.
 */
export interface SigningKeys {
  readonly current: SigningKey;
  readonly previous: readonly JWK[];
}

/** Where the keys live: a Secret shared by every replica, or memory in tests. */
export interface SigningKeyStore {
  /** The shared keys, created once on first use; every caller (and every replica) gets the same ones. */
  load(): Promise<SigningKeys>;
  /** Calls `listener` with the new keys after a rotation (made on any replica); returns the unsubscribe function. */
  onChange(listener: (keys: SigningKeys) => void): () => void;
}

/** The public JWK of a key (what the JWKS serves). */
export function publicJwkOf(privateJwk: JWK): JWK {
  return {
    kty: 'OKP',
    crv: 'Ed25519',
    x: privateJwk.x,
    ...(privateJwk.kid === undefined ? {} : { kid: privateJwk.kid }),
    alg: JWS_ALGORITHM,
    use: 'sig',
  };
}

export const JWS_ALGORITHM = 'EdDSA';

export async function generatePrivateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWS_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: JWS_ALGORITHM, use: 'sig' };
}

export async function signingKeyFromJwk(privateJwk: JWK): Promise<SigningKey> {
  if (
    privateJwk.kty !== 'OKP' ||
    privateJwk.crv !== 'Ed25519' ||
    typeof privateJwk.d !== 'string' ||
    typeof privateJwk.x !== 'string'
  ) {
    throw new Error('the signing key must be an Ed25519 private JWK (kty OKP, crv Ed25519, d and x)');
  }
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: privateJwk.x };
  const kid = privateJwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  const privateKey = (await importJWK({ ...privateJwk, alg: JWS_ALGORITHM }, JWS_ALGORITHM)) as CryptoKey;
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: JWS_ALGORITHM, use: 'sig' } };
}

export class MemorySigningKeyStore implements SigningKeyStore {
  private keys: Promise<SigningKeys> | undefined;
  private readonly listeners = new Set<(keys: SigningKeys) => void>();

  load(): Promise<SigningKeys> {
    this.keys ??= generatePrivateJwk()
      .then(signingKeyFromJwk)
      .then((current) => ({ current, previous: [] }));
    return this.keys;
  }

  onChange(listener: (keys: SigningKeys) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A new current key; the old one stays as the previous key. */
  async rotate(): Promise<SigningKeys> {
    const old = await this.load();
    const next = { current: await signingKeyFromJwk(await generatePrivateJwk()), previous: [old.current.publicJwk] };
    this.keys = Promise.resolve(next);
    for (const l of this.listeners) l(next);
    return next;
  }
}
