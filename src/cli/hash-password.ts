import { parseArgs } from 'node:util';
import yaml from 'js-yaml';
import {
  DEFAULT_ARGON2_PARAMS,
  hashPassword,
  meetsMinimum,
  PASSWORD_SECRET_LABEL,
  type Argon2Params,
} from '../signin/passwords.js';

const HELP = `Usage: endpoint-operator hash-password [--secret NAME [--key KEY] [--namespace NS]] [--memory-kib N] [--time-cost N] [--parallelism N] < password

Reads one password on stdin (a single trailing newline is removed) and prints its argon2id PHC
string, for the Secret a ShopUser or AdminUser names in spec.passwordSecretRef. The password is
never echoed or written anywhere else.

Flags:
  --secret NAME     print a whole Secret manifest (stringData[KEY] = the hash, labelled
                    pos.endpoint-operator.dev/password=true, which the sign-in API watches) instead of the bare hash
  --key KEY         data key in the Secret (default: password)
  --namespace NS    metadata.namespace of the Secret
  --memory-kib N    argon2id memory in KiB (default ${DEFAULT_ARGON2_PARAMS.memoryCost}, OWASP minimum)
  --time-cost N     argon2id iterations (default ${DEFAULT_ARGON2_PARAMS.timeCost})
  --parallelism N   argon2id lanes (default ${DEFAULT_ARGON2_PARAMS.parallelism})
  -h, --help        show this help

Example:
  printf '%s' "$PASSWORD" | endpoint-operator hash-password --secret ana-password --namespace endpoint-demo | kubectl apply -f -`;

const MAX_PASSWORD_CHARS = 1024;

/** At a terminal, prompt on stderr and read one line without echoing it. */
function readHidden(): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write('Password (not echoed): ');
    let value = '';
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new Error('interrupted'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
    stdin.resume();
  });
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return readHidden();
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function positiveInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

export async function main(argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        secret: { type: 'string' },
        key: { type: 'string' },
        namespace: { type: 'string' },
        'memory-kib': { type: 'string' },
        'time-cost': { type: 'string' },
        parallelism: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`endpoint-operator hash-password: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  let params: Argon2Params;
  try {
    params = {
      memoryCost: positiveInt(
        'memory-kib',
        values['memory-kib'] as string | undefined,
        DEFAULT_ARGON2_PARAMS.memoryCost,
      ),
      timeCost: positiveInt('time-cost', values['time-cost'] as string | undefined, DEFAULT_ARGON2_PARAMS.timeCost),
      parallelism: positiveInt(
        'parallelism',
        values.parallelism as string | undefined,
        DEFAULT_ARGON2_PARAMS.parallelism,
      ),
    };
  } catch (err) {
    console.error(`endpoint-operator hash-password: ${(err as Error).message}`);
    return 2;
  }
  if (!meetsMinimum(params)) {
    console.error(
      "endpoint-operator hash-password: these argon2id parameters are weaker than OWASP's minimum (m=19456 KiB with t=2, or m=47104/t=1, 12288/3, 9216/4, 7168/5); the sign-in API would refuse the hash",
    );
    return 2;
  }
  const input = await readStdin();
  const password = input.replace(/\r?\n$/, '');
  if (password.length === 0) {
    console.error('endpoint-operator hash-password: no password on stdin');
    return 1;
  }
  if (password.length > MAX_PASSWORD_CHARS) {
    console.error(
      `endpoint-operator hash-password: the password is longer than ${MAX_PASSWORD_CHARS} characters, which the sign-in API refuses`,
    );
    return 1;
  }
  const phc = await hashPassword(password, params);
  const secretName = values.secret as string | undefined;
  if (secretName === undefined) {
    process.stdout.write(`${phc}\n`);
    return 0;
  }
  const manifest = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: secretName,
      ...(typeof values.namespace === 'string' ? { namespace: values.namespace } : {}),
      labels: { [PASSWORD_SECRET_LABEL]: 'true' },
    },
    type: 'Opaque',
    stringData: { [typeof values.key === 'string' ? values.key : 'password']: phc },
  };
  process.stdout.write(yaml.dump(manifest, { lineWidth: -1 }));
  return 0;
}
