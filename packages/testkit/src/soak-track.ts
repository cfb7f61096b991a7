// The soak's watch over its monitors: each monitor's events checked against the order a
// reconnection allows (connected, updates, disconnected, connected, updates, ...), and per phase
// how many monitors went down and came back (with the time of each one's first update back).
import type { MonitorEvent } from 'epics-client';

/** Where a monitor stands: connected but no update yet, receiving updates, or disconnected. */
type State = 'new' | 'connected' | 'up' | 'down';

interface Watched {
  readonly name: string;
  state: State;
  /** Disconnects and returns (first update after a reconnect) in the current phase. */
  downs: number;
  backs: number;
  /** When the first update after the last reconnect arrived (performance.now()). */
  backAt: number;
}

export class MonitorTracker {
  private readonly all: Watched[] = [];
  /** Monitors that went down at least once / came back at least once this phase. */
  private downOnce = 0;
  private backOnce = 0;
  /** Every event out of order, as "name: event in state" (kept to the first 100). */
  readonly violations: string[] = [];
  violationCount = 0;
  errors = 0;
  updates = 0;

  /** A callback for one monitor's events. */
  watch(name: string): (ev: MonitorEvent<unknown>) => void {
    const w: Watched = { name, state: 'new', downs: 0, backs: 0, backAt: 0 };
    this.all.push(w);
    return (ev) => this.onEvent(w, ev);
  }

  get size(): number {
    return this.all.length;
  }

  private violation(w: Watched, what: string): void {
    this.violationCount++;
    if (this.violations.length < 100) this.violations.push(`${w.name}: ${what} while ${w.state}`);
  }

  private onEvent(w: Watched, ev: MonitorEvent<unknown>): void {
    const kind = (ev as { kind?: string }).kind;
    if (kind === 'error') {
      this.errors++;
      const err = (ev as { error?: { message?: string } }).error;
      return this.violation(w, `error event (${err?.message ?? 'no message'})`);
    }
    if (kind === 'connected') {
      if (w.state !== 'new' && w.state !== 'down') return this.violation(w, 'connected');
      w.state = 'connected';
      return;
    }
    if (kind === 'disconnected') {
      // A disconnect before the first update back is out of order too: the soak waits for
      // every monitor's updates before the next outage.
      if (w.state !== 'up') return this.violation(w, 'disconnected');
      w.state = 'down';
      if (w.downs++ === 0) this.downOnce++;
      if (w.downs > 1) this.violation(w, 'a second disconnect in one outage');
      return;
    }
    if (kind === 'access') return;
    // An update.
    this.updates++;
    if (w.state === 'up') return;
    if (w.state !== 'connected') return this.violation(w, 'update');
    const returning = w.downs > 0;
    w.state = 'up';
    if (!returning) return;
    w.backAt = performance.now();
    if (w.backs++ === 0) this.backOnce++;
  }

  /** Start a new outage: counts of this phase back to zero. */
  beginPhase(): void {
    this.downOnce = 0;
    this.backOnce = 0;
    for (const w of this.all) {
      w.downs = 0;
      w.backs = 0;
      w.backAt = 0;
    }
  }

  /** True when every monitor is receiving updates (the first ones, before any outage). */
  allUp(): boolean {
    return this.all.every((w) => w.state === 'up');
  }

  /** True when every monitor went down in this phase. */
  allDown(): boolean {
    return this.downOnce === this.all.length;
  }

  /** True when every monitor came back (an update after its reconnect) in this phase. */
  allBack(): boolean {
    return this.backOnce === this.all.length && this.all.every((w) => w.state === 'up');
  }

  /** How many are down / back in this phase (for a timeout's message). */
  progress(): { down: number; back: number; of: number } {
    return { down: this.downOnce, back: this.backOnce, of: this.all.length };
  }

  /** Names of monitors not back yet in this phase (the first few). */
  stragglers(max = 5): string[] {
    return this.all
      .filter((w) => w.backs === 0 || w.state !== 'up')
      .slice(0, max)
      .map((w) => `${w.name} (${w.state})`);
  }

  /**
   * Milliseconds from `t0` to each monitor's first update back this phase (ascending), of the
   * names `which` picks; 0 for one back before `t0`.
   */
  backTimes(t0: number, which: (name: string) => boolean = () => true): number[] {
    return this.all
      .filter((w) => which(w.name))
      .map((w) => Math.max(0, w.backAt - t0))
      .sort((a, b) => a - b);
  }
}

/** Least-squares slope of ys over xs (0 with fewer than two points). */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i]!;
    sy += ys[i]!;
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** The median of sorted values (0 when empty). */
export function median(sorted: readonly number[]): number {
  if (sorted.length === 0) return 0;
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2;
}
