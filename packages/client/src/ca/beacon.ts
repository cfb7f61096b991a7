// Beacon anomalies, as libca judges them: which beacon of a CA server says it has (re)appeared, so
// that names not yet found are searched for again at once. Pure: the caller gives the time.

/**
 * Beacon ids up to this many below the last one, within LATE_MS of it, are late copies (a
 * redundant route). Later than that, they are a server that restarted after a short life (its
 * count started from 0 again and has not yet passed the last id seen).
 */
const LATE_WINDOW = 4;
const LATE_MS = 1000;

interface Server {
  /** When its last beacon came (ms), the id it carried, the average period (ms; < 0: unknown). */
  at: number;
  id: number;
  period: number;
}

export class BeaconAnomalies {
  private readonly servers = new Map<string, Server>();

  /** `expectedPeriodMs`: the period assumed before two beacons were seen (EPICS_CA_BEACON_PERIOD). */
  constructor(private readonly expectedPeriodMs = 15_000) {}

  /**
   * A beacon from `server` ("host:port") with `id`, at `now` (ms): true when it is an anomaly (a
   * server not seen before, one whose ids start again from below the last, one silent for over
   * three periods, or one whose beacons come faster than before, as a restarted server's do).
   */
  beacon(server: string, id: number, now: number): boolean {
    const s = this.servers.get(server);
    if (!s) {
      this.servers.set(server, { at: now, id, period: -1 });
      return true;
    }
    const advance = (id - s.id) >>> 0;
    const period = now - s.at;
    const back = advance === 0 || advance > 0xffffffff - LATE_WINDOW;
    // The same beacon again, or a late copy: ignore it (its timing says nothing).
    if (back && period < LATE_MS) return false;
    s.id = id;
    s.at = now;
    if (back || advance > 0x7fffffff) {
      // The ids went back, or the last one came again long after: the server restarted (its
      // count starts from 0 again).
      s.period = -1;
      return true;
    }
    // A few beacons lost on the way: no change of the server, and no period to learn from.
    if (advance > 1 && advance < 4) return false;
    const avg = s.period < 0 ? this.expectedPeriodMs : s.period;
    const anomaly = period >= avg * 3.25 || (s.period >= 0 && period <= avg * 0.8);
    s.period = s.period < 0 ? period : period * 0.125 + s.period * 0.875;
    return anomaly;
  }

  /** Forget servers not heard from for `maxAgeMs` (bounds the table over months). */
  /** True when `server` ("host:port") has been heard (and not pruned since). */
  has(server: string): boolean {
    return this.servers.has(server);
  }

  prune(now: number, maxAgeMs: number): void {
    for (const [k, s] of this.servers) if (now - s.at > maxAgeMs) this.servers.delete(k);
  }
}
