// The one set of defaults of the harness: the CLI's options, the built-in IOC and the bench use
// these; the Python IOC, the runners and the C program are always given their values explicitly.
import { DEFAULT_TIMEOUT_MS } from 'epics-ops';

export interface Defaults {
  readonly records: number;
  readonly rate: number;
  readonly samples: number;
  readonly timeoutMs: number;
  readonly prefix: string;
  readonly nameStyle: 'plain' | 'padded';
  readonly iocArrayElements: number;
  readonly iocArrayRate: number | 'max';
  readonly benchArrayElements: number;
  readonly benchArraySamples: number;
  readonly benchArrayRate: number | 'max';
  readonly repeat: number;
  readonly client: string;
}

export const DEFAULTS: Defaults = Object.freeze({
  /** Counters the built-in IOC serves and the monitor workload watches. */
  records: 1000,
  /** Counter update rate, Hz. */
  rate: 10,
  /** Samples kept per counter in the monitor workload. */
  samples: 100,
  /** Timeout of each PV of a snapshot, ms: epics-ops's, as its commands have it. */
  timeoutMs: DEFAULT_TIMEOUT_MS,
  prefix: 'TEST:',
  nameStyle: 'plain',
  /** Elements of PREFIX:ARRAY in a plain `epicsperf ioc`, and its refresh rate (Hz). */
  iocArrayElements: 1_000_000,
  iocArrayRate: 1,
  /** The bench's array workload: waveform size, updates per run, the IOC's refresh rate. */
  benchArrayElements: 10_000_000,
  benchArraySamples: 30,
  benchArrayRate: 'max',
  /** Runs per client and workload in `bench`. */
  repeat: 3,
  /** The client the commands run when --client names none: a client of clients.json whose runner serves every task and captures. */
  client: 'node',
});
