/** Time as a dependency, so expiry can be tested with a fake clock instead of waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to; for tests. */
export function fakeClock(start = Date.UTC(2026, 0, 1)): Clock & { advance(ms: number): void; set(ms: number): void } {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
    set(ms: number) {
      current = ms;
    },
  };
}
