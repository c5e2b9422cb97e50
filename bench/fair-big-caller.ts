/**
 * B6-fair's big caller, in its own process (gateway-fair.ts starts it): sending ~100 bodies of 1.4 MB a
 * second and reading their answers is real CPU work, and done in the measuring process it delayed that
 * process's own timers and reads of the small caller's answers, which then counted against the gateway.
 * Loops `concurrency` calls of the body until stdin closes, then prints the status counts as one JSON line.
 *
 *   tsx bench/fair-big-caller.ts <url> <concurrency> <instances>
 */
import { Agent, request } from 'undici';

const [url = '', concurrencyArg = '4', instancesArg = '0'] = process.argv.slice(2);
const payment = { amount: 240, hourOfDay: 23, foreignMerchant: 1, cardPresent: 0, transactionsLast24h: 5 };
/** Encoded once: the caller's own per-call work is the sending, as a client with its body ready. */
const body = Buffer.from(
  JSON.stringify({ instances: Array.from({ length: Number(instancesArg) }, (_, i) => ({ ...payment, amount: i })) }),
);
const agent = new Agent({ localAddress: '127.0.0.2', connections: Number(concurrencyArg) });
const codes: Record<string, number> = {};
let looping = true;
process.stdin.on('close', () => (looping = false)).resume();

const loops = Array.from({ length: Number(concurrencyArg) }, async () => {
  while (looping) {
    const status = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body,
    }).then(
      async (res) => (await res.body.dump(), res.statusCode),
      () => 0,
    );
    codes[status] = (codes[status] ?? 0) + 1;
  }
});
console.log(JSON.stringify({ ready: true, bytes: body.length }));
await Promise.all(loops);
await agent.close();
console.log(JSON.stringify({ codes }));
