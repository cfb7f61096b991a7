// The Node runners' wall clock: the monotonic clock's resolution, and the system's wall clock
// followed when it is stepped, as the IOC's timestamps follow it (a backward step of 1.3 ms under
// a runner once made its one-way times 1.3 ms longer than its round trips).
import { describe, expect, it } from 'vitest';
import { WALL_CHECK_MS, WallClock } from '../../src/clock.js';

/** A system whose true wall clock is `origin + mono + step` ms; Date.now() floors it. */
function system(origin: number) {
  const s = { mono: 0, step: 0 };
  const clock = new WallClock(
    () => s.mono,
    () => Math.floor(origin + s.mono + s.step),
    origin,
  );
  const truth = () => origin + s.mono + s.step;
  return { s, clock, truth };
}

describe('WallClock', () => {
  it('while the wall clock keeps step: timeOrigin + now(), to the microsecond', () => {
    const { s, clock, truth } = system(1_700_000_000_000.5);
    for (let i = 0; i < 10_000; i++) {
      s.mono += 0.0371;
      expect(Math.abs(clock.nowMs() - truth())).toBeLessThan(1e-6);
    }
  });

  it('follows a backward step of 1.3 ms at its next reading of the wall clock to within 1 ms, and closer with every reading', () => {
    const { s, clock, truth } = system(1_700_000_000_000.25);
    s.mono = 1000;
    clock.nowMs();
    s.step = -1.3;
    s.mono += WALL_CHECK_MS * 1.01;
    expect(Math.abs(clock.nowMs() - truth())).toBeLessThan(1);
    for (let i = 0; i < 1000; i++) {
      s.mono += 0.0371;
      clock.nowMs();
    }
    expect(Math.abs(clock.nowMs() - truth())).toBeLessThan(0.05);
  });

  it('follows a forward step, and never runs ahead of the wall clock it follows', () => {
    const { s, clock, truth } = system(1_700_000_000_000.9);
    s.mono = 500;
    clock.nowMs();
    s.step = 2.6;
    for (let i = 0; i < 1000; i++) {
      s.mono += 0.0371;
      const err = clock.nowMs() - truth();
      expect(err).toBeLessThanOrEqual(1e-9);
      // Behind by the step until the wall clock is next read.
      if (s.mono - 500 >= WALL_CHECK_MS) expect(err).toBeGreaterThan(-1);
    }
    expect(Math.abs(clock.nowMs() - truth())).toBeLessThan(0.05);
  });
});
