// The clocks of samples and durations, the same in the Node runners and the capture session: the
// wall clock at the monotonic clock's resolution (following the system when it steps), and the monotonic one.
/** The wall clock is read at most this often (monotonic ms): a runner takes the time of every update. */
export const WALL_CHECK_MS = 0.1;

/**
 * The wall clock with the monotonic clock's resolution, in ms: performance.timeOrigin +
 * performance.now(), except that it follows the wall clock when the system steps it (a virtual
 * machine's clock sync, NTP), as the IOC's timestamps do. Date.now() floors to the ms, so
 * Date.now() - performance.now() lies within 1 ms below the offset while the wall clock keeps
 * step with the monotonic one; a reading above the offset, or 1 ms or more below it, means the
 * wall clock moved, and the offset follows (from below, the largest reading since). The wall
 * clock is read at most every WALL_CHECK_MS, which halves the cost of a reading at 100,000 a second.
 */
export class WallClock {
  private offset: number;
  private checked = Number.NEGATIVE_INFINITY;
  constructor(
    private readonly mono: () => number = () => performance.now(),
    private readonly wall: () => number = () => Date.now(),
    origin: number = performance.timeOrigin,
  ) {
    this.offset = origin;
  }

  nowMs(): number {
    const m = this.mono();
    if (m - this.checked >= WALL_CHECK_MS) {
      this.checked = m;
      const floor = this.wall() - m;
      if (floor > this.offset || floor <= this.offset - 1) this.offset = floor;
    }
    return this.offset + m;
  }
}

const wallClock = new WallClock();

/** Wall-clock now in POSIX seconds with sub-millisecond resolution (WallClock). */
export function nowSeconds(): number {
  return wallClock.nowMs() / 1000;
}

/** Monotonic seconds, for durations (a round trip): never moved by the wall clock. */
export function monoSeconds(): number {
  return performance.now() / 1000;
}
