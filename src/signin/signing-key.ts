import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

/** The Ed25519 key that signs every token, as stored (private JWK) and as used. */
export interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

/** Where the key lives: a Secret shared by every replica, or memory in tests. */
export interface SigningKeyStore {
  /** The shared key, created once on first use; every caller (and every replica) gets the same one. */
  load(): Promise<SigningKey>;
}

export const JWS_ALGORITHM = 'EdDSA';

export async function generatePrivateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(JWS_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), alg: JWS_ALGORITHM, use: 'sig' };
}

export async function signingKeyFromJwk(privateJwk: JWK): Promise<SigningKey> {
  if (privateJwk.kty !== 'OKP' || privateJwk.crv !== 'Ed25519' || typeof privateJwk.d !== 'string' || typeof privateJwk.x !== 'string') {
    throw new Error('the signing key must be an Ed25519 private JWK (kty OKP, crv Ed25519, d and x)');
  }
  const publicJwk: JWK = { kty: 'OKP', crv: 'Ed25519', x: privateJwk.x };
  const kid = privateJwk.kid ?? (await calculateJwkThumbprint(publicJwk));
  const privateKey = (await importJWK({ ...privateJwk, alg: JWS_ALGORITHM }, JWS_ALGORITHM)) as CryptoKey;
  return { kid, privateKey, publicJwk: { ...publicJwk, kid, alg: JWS_ALGORITHM, use: 'sig' } };
}

export class MemorySigningKeyStore implements SigningKeyStore {
  private key: Promise<SigningKey> | undefined;
  load(): Promise<SigningKey> {
    this.key ??= generatePrivateJwk().then(signingKeyFromJwk);
    return this.key;
  }
}
