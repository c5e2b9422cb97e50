import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Tallies } from '../../../src/runtime/metrics.js';

describe('Tallies', () => {
  it('adds its counts to the counter each time the counter is read, once each', async () => {
    const registry = new Registry();
    const tallies = new Tallies<'call' | 'outcome'>();
    const counter = new Counter({ name: 'calls_total', help: 'h', labelNames: ['call', 'outcome'] as const, registers: [registry], collect() { tallies.flushInto(this); } });
    const allowed = tallies.bind({ call: 'predict', outcome: 'allowed' });
    const same = tallies.bind({ outcome: 'allowed', call: 'predict' });
    const denied = tallies.bind({ call: 'predict', outcome: 'forbidden' });
    allowed.inc();
    same.inc();
    denied.inc();
    counter.inc({ call: 'explain', outcome: 'allowed' }); // direct increments still count
    const scrape = async (): Promise<string> => registry.metrics();
    expect(await scrape()).toContain('calls_total{call="predict",outcome="allowed"} 2');
    expect(await scrape()).toContain('calls_total{call="predict",outcome="allowed"} 2'); // read twice, counted once
    allowed.inc();
    const text = await scrape();
    expect(text).toContain('calls_total{call="predict",outcome="allowed"} 3');
    expect(text).toContain('calls_total{call="predict",outcome="forbidden"} 1');
    expect(text).toContain('calls_total{call="explain",outcome="allowed"} 1');
  });
});
