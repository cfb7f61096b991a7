// The bench profiles: `quick` (the default, every client in minutes) and `full` (the published
// workloads). What each workload runs on a profile is in its own module (src/workloads/).
import { DEFAULTS } from '../defaults.js';

export interface BenchProfile {
  name: 'quick' | 'full';
  /** Runs per client and workload. */
  repeat: number;
  /** A client still running one workload after this many seconds beyond the run's own time is
   *  stopped (undefined: only the runners' own deadlines apply). */
  clientDeadlineS: number | undefined;
}

export const PROFILES: Record<BenchProfile['name'], BenchProfile> = {
  quick: { name: 'quick', repeat: 1, clientDeadlineS: 30 },
  full: { name: 'full', repeat: DEFAULTS.repeat, clientDeadlineS: undefined },
};

/** A client's deadline on one run of `workS` seconds of its own (the samples at their rate, a step's seconds). */
export type DeadlineFor = (workS: number) => { clientDeadlineMs?: number };

/** --deadline as given, from the run's start; a profile's beyond the time the run asks for. */
export function clientDeadline(o: { clientDeadlineS?: number | undefined; clientDeadlineBeyondWork?: boolean }): DeadlineFor {
  const s = o.clientDeadlineS;
  if (s === undefined) return () => ({});
  return (workS) => ({ clientDeadlineMs: Math.ceil((s + (o.clientDeadlineBeyondWork ? workS : 0)) * 1000) });
}
