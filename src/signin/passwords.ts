import argon2 from 'argon2';

/**
 * argon2id parameters. OWASP's Password Storage Cheat Sheet lists m=19 MiB, t=2, p=1 as the
 * minimum; we use m=19 MiB, t=2, p=1 by default and refuse to verify anything weaker, so a
 * Secret filled with a cheap hash cannot quietly downgrade an account.
 */
export interface Argon2Params {
  readonly memoryCost: number; // KiB
  readonly timeCost: number;
  readonly parallelism: number;
}

/**
 * The label a password Secret must carry: the sign-in API watches only Secrets with it, so the
 * operator does not cache every Secret of the namespace (`hash-password --secret` sets it).
 */
export const PASSWORD_SECRET_LABEL = 'pos.endpoint-operator.dev/password';

export const OWASP_MINIMUM: Argon2Params = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };
export const DEFAULT_ARGON2_PARAMS: Argon2Params = OWASP_MINIMUM;

export async function hashPassword(password: string, params: Argon2Params = DEFAULT_ARGON2_PARAMS): Promise<string> {
  return argon2.hash(password, { type: argon2.argon2id, ...params });
}

// PHC string format: `$argon2id$v=19$<params>$<salt>$<hash>`; the params are `k=v` pairs in any order
// (node-argon2 writes `m,p,t`, the reference implementation `m,t,p`).
const PHC = /^\$argon2id\$v=19\$([a-z]=\d+(?:,[a-z]=\d+)*)\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

/** Parameters of an argon2id PHC string, or undefined when it is not one. */
export function parsePhc(phc: string): Argon2Params | undefined {
  const m = PHC.exec(phc.trim());
  if (!m?.[1]) return undefined;
  const params = new Map(m[1].split(',').map((kv) => [kv.slice(0, 1), Number(kv.slice(2))] as const));
  const memoryCost = params.get('m');
  const timeCost = params.get('t');
  const parallelism = params.get('p');
  if (memoryCost === undefined || timeCost === undefined || parallelism === undefined || params.size !== 3)
    return undefined;
  return { memoryCost, timeCost, parallelism };
}

/**
 * OWASP's Password Storage Cheat Sheet lists five argon2id configurations of equal strength
 * (memory KiB, iterations), all with p=1. A hash is strong enough when it is at least as costly as
 * one of them in both memory and iterations.
 */
export const OWASP_EQUIVALENTS: readonly (readonly [number, number])[] = [
  [47_104, 1],
  [19_456, 2],
  [12_288, 3],
  [9_216, 4],
  [7_168, 5],
];

export function meetsMinimum(p: Argon2Params, min: Argon2Params = OWASP_MINIMUM): boolean {
  if (p.parallelism < 1) return false;
  const floor = min === OWASP_MINIMUM ? OWASP_EQUIVALENTS : [[min.memoryCost, min.timeCost] as const];
  return floor.some(([m, t]) => p.memoryCost >= m && p.timeCost >= t);
}

/** Roughly what a verification costs: argon2 fills `memoryCost` KiB `timeCost` times. */
export function hashCost(p: Argon2Params): number {
  return p.memoryCost * p.timeCost;
}

/**
 * Verifies passwords so that an unknown email, an unusable hash and a wrong password cost the same:
 * each runs one argon2id verification, against a dummy hash when there is nothing real to compare
 * with. The dummy has the parameters of the costliest real hash (`strongest`, from the directory;
 * never below those given at start-up), so an unknown email is not answered faster than a user
 * whose hash is stronger than the default. Dummies are made once per parameter set.
 */
export class PasswordVerifier {
  private readonly dummies = new Map<string, Promise<string>>();

  private constructor(
    private readonly base: Argon2Params,
    private readonly minimum: Argon2Params,
  ) {}

  static async create(
    params: Argon2Params = DEFAULT_ARGON2_PARAMS,
    minimum: Argon2Params = OWASP_MINIMUM,
  ): Promise<PasswordVerifier> {
    const verifier = new PasswordVerifier(params, minimum);
    await verifier.dummyFor(undefined);
    return verifier;
  }

  /** True only when `phc` is a strong-enough argon2id hash of `password`; `strongest`: the costliest real hash's parameters. */
  async verify(phc: string | undefined, password: string, strongest?: Argon2Params): Promise<boolean> {
    const params = phc === undefined ? undefined : parsePhc(phc);
    if (phc === undefined || params === undefined || !meetsMinimum(params, this.minimum)) {
      await this.burn(password, strongest);
      return false;
    }
    try {
      return await argon2.verify(phc.trim(), password);
    } catch {
      return false;
    }
  }

  /** The parameters a dummy verification uses: the strongest real hash's, if costlier than the base. */
  dummyParams(strongest: Argon2Params | undefined): Argon2Params {
    return strongest && hashCost(strongest) > hashCost(this.base) ? strongest : this.base;
  }

  private dummyFor(strongest: Argon2Params | undefined): Promise<string> {
    const p = this.dummyParams(strongest);
    const key = `${p.memoryCost},${p.timeCost},${p.parallelism}`;
    let dummy = this.dummies.get(key);
    if (!dummy) {
      dummy = hashPassword(`dummy-${Math.random()}`, p);
      this.dummies.set(key, dummy);
      dummy.catch(() => this.dummies.delete(key));
    }
    return dummy;
  }

  private async burn(password: string, strongest: Argon2Params | undefined): Promise<void> {
    try {
      await argon2.verify(await this.dummyFor(strongest), password);
    } catch {
      // the dummy hash is our own; a failure here changes nothing about the answer
    }
  }
}
