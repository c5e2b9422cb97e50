/** Time is injected so that expiry, throttling and rotation are tested without sleeping. */
export interface Clock {
  now(): number; // milliseconds since the epoch
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
