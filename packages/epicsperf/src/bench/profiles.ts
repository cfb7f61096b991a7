// The bench profiles: `quick` (the default, every client in minutes) and `full` (the published
// workloads). A profile is data; a new workload joins a profile as one more entry of `workloads`.
import type { ArrayPutWorkload, ArrayWorkload, CaptureWorkload, HeadroomWorkload, LatencyWorkload } from '../results/index.js';
import { HEADROOM_STEPS } from './headroom.js';
import { DEFAULT_LATENCY_SIZES } from './latency.js';
import { DEFAULTS } from '../defaults.js';

export interface BenchProfile {
  name: 'quick' | 'full';
  /** Runs per client and workload. */
  repeat: number;
  /** Snapshot timeout per PV, ms. */
  timeoutMs: number;
  /** A client still running one workload after this many seconds is stopped (undefined: only the
   *  runners' own deadlines apply). */
  clientDeadlineS: number | undefined;
  /** What `bench all` runs; `bench snapshot|monitor|array|array-put|latency|capture` picks one family from here. */
  workloads: {
    /** Snapshot workload ids (src/bench/suite.ts SNAPSHOT_WORKLOADS). */
    snapshot: string[];
    monitor: { records: number; samples: number; rate: number };
    /** Run by `bench all` when `inAll` is set, and always by `bench array`. */
    array: ArrayWorkload & { inAll: boolean };
    /** The capture workload (src/bench/capture.ts): it raises the load step by step until updates
     *  are lost, so it is not in the quick profile; `bench capture` runs the full profile's. */
    capture?: CaptureWorkload & { inAll: boolean };
    /** Run by `bench all` when `inAll` is set, and always by `bench array-put` (its element type is the array's). */
    arrayPut: Omit<ArrayPutWorkload, 'type'> & { inAll: boolean };
    /** Run by `bench all` when `inAll` is set, and always by `bench latency`. */
    latency: LatencyWorkload & { inAll: boolean };
    /** The headroom workload (src/bench/headroom.ts): rising steps until a client gives way, so
     *  not in the quick profile; `bench headroom` runs the full profile's. */
    headroom?: HeadroomWorkload & { inAll: boolean };
  };
}

export const PROFILES: Record<BenchProfile['name'], BenchProfile> = {
  quick: {
    name: 'quick',
    repeat: 1,
    timeoutMs: DEFAULTS.timeoutMs,
    clientDeadlineS: 30,
    workloads: {
      snapshot: ['97+15', '1000+95'],
      monitor: { records: DEFAULTS.records, samples: 30, rate: DEFAULTS.rate },
      array: { elements: 1_000_000, samples: 10, rate: 'max', inAll: true },
      arrayPut: { elements: 1_000_000, samples: 10, inAll: false },
      // Three sizes, five decades apart: the fixed cost, the middle and the bandwidth.
      latency: { sizes: [1, 1000, 100_000], elementType: 'double', samplesPerSize: 50, inAll: true },
    },
  },
  full: {
    name: 'full',
    repeat: DEFAULTS.repeat,
    timeoutMs: DEFAULTS.timeoutMs,
    clientDeadlineS: undefined,
    workloads: {
      snapshot: ['97', '97+4', '97+15', '1000+95', '10000+95'],
      monitor: { records: DEFAULTS.records, samples: DEFAULTS.samples, rate: DEFAULTS.rate },
      array: { elements: DEFAULTS.benchArrayElements, samples: DEFAULTS.benchArraySamples, rate: DEFAULTS.benchArrayRate, inAll: false },
      capture: { seconds: 5, flushMs: 1000, inAll: false },
      arrayPut: { elements: DEFAULTS.benchArrayElements, samples: DEFAULTS.benchArraySamples, inAll: false },
      // The ADO bridge study's range, a decade apart (`bench latency --full`).
      latency: { sizes: DEFAULT_LATENCY_SIZES, elementType: 'double', samplesPerSize: 200, inAll: false },
      headroom: { seconds: 4, steps: [...HEADROOM_STEPS], inAll: false },
    },
  },
};

/** A client's deadline on one run of `workS` seconds of its own (the samples at their rate, a step's seconds). */
export type DeadlineFor = (workS: number) => { clientDeadlineMs?: number };

/** --deadline as given, from the run's start; a profile's beyond the time the run asks for. */
export function clientDeadline(o: { clientDeadlineS?: number | undefined; clientDeadlineBeyondWork?: boolean }): DeadlineFor {
  const s = o.clientDeadlineS;
  if (s === undefined) return () => ({});
  return (workS) => ({ clientDeadlineMs: Math.ceil((s + (o.clientDeadlineBeyondWork ? workS : 0)) * 1000) });
}
