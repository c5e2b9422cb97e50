/**
 * A steady stream of HTTPS calls from inside the real node's network namespace (dev/cluster/real-node/node-network.ts),
 * where kube-proxy's rules are: a Service's cluster IP answers there as it answers a pod. The caller is a Node
 * process started there (`ip netns exec`), firing `ratePerSecond` calls a second whatever the answers take, until
 * stop() or `maxCalls`: REST over one keep-alive HTTP/1.1 connection pool like an SDK's, or gRPC through grpc-js (the
 * transport of Google's Node clients: one HTTP/2 channel, reconnected on GOAWAY). Every call's outcome is counted; a
 * failure (an error, a status other than 200, a gRPC status other than OK) is kept with its time and reason.
 */
import { spawn } from 'node:child_process';
import { inNodeNetwork } from '../../dev/cluster/real-node/node-network.js';

export interface CallStreamOptions {
  /** https://<cluster IP>:<port><path> */
  readonly url: string;
  /** The name the server's certificate is checked against (a Service's DNS name). */
  readonly servername: string;
  readonly caPem: string;
  /** REST: the request's headers. gRPC: sent as metadata, except content-type. */
  readonly headers: Readonly<Record<string, string>>;
  /** REST: the JSON body, POSTed to `url`. */
  readonly body: string;
  /** Calls this gRPC method (`/package.Service/Method`) on `url`'s host with this encoded message instead. */
  readonly grpc?: { readonly method: string; readonly messageBase64: string };
  readonly ratePerSecond: number;
  /** The stream's bound: it ends by itself after this many calls. */
  readonly maxCalls: number;
  /**
   * Calls the caller keeps in flight at most, as a client with a bounded pool does (default 32): a tick that finds
   * them all waiting sends nothing and is counted as deferred. Without it, a stall of the machine piles an open
   * loop's calls onto one gateway replica (a gRPC channel holds one connection) past the per-caller limit (64),
   * and the gateway refuses them RESOURCE_EXHAUSTED, as it should.
   */
  readonly maxInFlight?: number;
}

export interface CallStreamResult {
  readonly calls: number;
  readonly ok: number;
  /** Ticks at which maxInFlight calls were still waiting, so none was sent. */
  readonly deferred: number;
  readonly seconds: number;
  /** Every failed call: ms since the stream began, and the status or error. */
  readonly failures: readonly { at: number; reason: string }[];
}

export interface CallStream {
  /** Resolves once the first call has been answered 200 (the stream is known to reach its target). */
  readonly firstAnswer: Promise<void>;
  /** Sends no further call, waits for those in flight, and resolves to the tally. */
  stop(): Promise<CallStreamResult>;
}

/** The caller, as an ES module read from stdin's first line (its options); a line "stop" ends it. */
const CALLER = `
import https from 'node:https';
import readline from 'node:readline';
const lines = readline.createInterface({ input: process.stdin });
const it = lines[Symbol.asyncIterator]();
const o = JSON.parse((await it.next()).value);
const agent = new https.Agent({ keepAlive: true, ca: o.caPem, servername: o.servername });
const url = new URL(o.url);
const started = Date.now();
let calls = 0, ok = 0, deferred = 0, inFlight = 0, stopping = false, announced = false;
const maxInFlight = o.maxInFlight ?? 32;
const failures = [];
const answered = () => { ok++; if (!announced) { announced = true; process.stderr.write('first-answer\\n'); } };
let grpcCall;
if (o.grpc) {
  const grpc = await import('@grpc/grpc-js');
  const client = new grpc.Client(url.host, grpc.credentials.createSsl(Buffer.from(o.caPem)), {
    'grpc.ssl_target_name_override': o.servername,
    'grpc.default_authority': o.servername,
  });
  const message = Buffer.from(o.grpc.messageBase64, 'base64');
  const same = (b) => b;
  grpcCall = (fail) => {
    const metadata = new grpc.Metadata();
    for (const [k, v] of Object.entries(o.headers)) if (k !== 'content-type') metadata.set(k, v);
    client.makeUnaryRequest(o.grpc.method, same, same, message, metadata, { deadline: Date.now() + 10000 }, (err) => {
      if (err) fail('gRPC ' + grpc.status[err.code] + ' ' + err.details);
      else answered();
      done();
    });
  };
}
function call() {
  if (inFlight >= maxInFlight) { deferred++; return; }
  calls++; inFlight++;
  const at = Date.now() - started;
  const fail = (reason) => { failures.push({ at, reason }); };
  if (grpcCall) return grpcCall(fail);
  const req = https.request(url, { method: 'POST', agent, headers: { ...o.headers, 'content-length': Buffer.byteLength(o.body) }, timeout: 10000 }, (res) => {
    let text = '';
    res.setEncoding('utf8').on('data', (d) => (text += d)).on('end', () => {
      if (res.statusCode === 200) answered();
      else fail(res.statusCode + ' ' + text.slice(0, 200));
      done();
    });
  });
  req.on('timeout', () => req.destroy(new Error('timeout after 10 s')));
  // Whether the call went onto a kept-alive connection or a new one tells a drain race from a closed listener.
  req.on('error', (err) => { fail((err.code ?? err.message) + (req.reusedSocket ? ' (kept-alive connection)' : ' (new connection)')); done(); });
  req.end(o.body);
}
function done() { inFlight--; finish(); }
function finish() {
  if (!stopping || inFlight > 0) return;
  agent.destroy();
  process.stdout.write(JSON.stringify({ calls, ok, deferred, seconds: (Date.now() - started) / 1000, failures }) + '\\n');
  process.exit(0);
}
const timer = setInterval(() => { if (calls >= o.maxCalls) stop(); else call(); }, 1000 / o.ratePerSecond);
function stop() { if (stopping) return; stopping = true; clearInterval(timer); finish(); }
it.next().then(stop, stop);
`;

export function startCallStream(options: CallStreamOptions): CallStream {
  const [cmd, args] = inNodeNetwork(process.execPath, ['--input-type=module', '-e', CALLER]);
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const firstAnswer = new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.includes('first-answer')) resolve();
    });
    void exited.then(() => reject(new Error(`the caller ended before any answer: ${stderr.slice(-2000)}`)));
  });
  firstAnswer.catch(() => {});
  child.stdin.on('error', () => {}); // the caller may have ended by itself (maxCalls)
  child.stdin.write(`${JSON.stringify(options)}\n`);
  return {
    firstAnswer,
    stop: async () => {
      child.stdin.end('stop\n');
      const code = await exited;
      if (code !== 0) throw new Error(`the caller exited ${code}: ${stderr.slice(-2000)}`);
      return JSON.parse(stdout) as CallStreamResult;
    },
  };
}
