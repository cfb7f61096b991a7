// The capture result shapes: what a capture runner reports when it stops (CaptureSummary), a
// capture run seen from the orchestrator (CaptureRun), the `capture` command's document of one,
// and the bench's capture workload.

/** The format of `capture --format json`'s document, written in its `schema` field. */
export const CAPTURE_FORMAT = 'epicsperf/capture@1';

// A count: a whole number, never negative (`integer`, `minimum: 0` in the JSON Schema).
/** @asType integer @minimum 0 */
type Count = number;

/** One PV of a capture, as the runner counted it. */
export interface CapturePvSummary {
  name: string;
  /** Updates written to the file. */
  updates: Count;
  /** Bytes of data written for this PV (values and per-update columns). */
  bytes: Count;
  /** Gap records (places where a checked PV did not step by exactly 1). */
  gaps: Count;
  /** Updates lost in those gaps. */
  lost: number;
  /** Updates the client library itself dropped (a full queue), when it says so. */
  overruns: Count;
  /** Whether gaps were looked for on this PV (--gap-check). */
  checked: boolean;
  /** Set when the PV is not in the file: why (never connected, a string PV, ...). */
  skipped?: string;
}

/** What a capture runner ships when it stops (docs/runners.md, "The capture workload"). */
export interface CaptureSummary {
  client: string;
  version: string;
  file: string;
  pvs: CapturePvSummary[];
  updates: Count;
  /** Bytes of data handed to the HDF5 library (values and per-update columns). */
  bytes: Count;
  /** Size of the file when closed. */
  fileBytes: Count;
  /** From the first subscription to the stop, seconds. */
  seconds: number;
  flushes: Count;
  maxFlushMs: number;
  meanFlushMs: number;
  /** Flushes that took longer than the flush period. */
  slowFlushes: Count;
  /** Set when the capture stopped on its own: why (a full disk, a write error). */
  error?: string;
}

/** A capture run seen from the orchestrator: the runner's summary and its CPU and memory. */
export interface CaptureRun {
  client: string;
  ok: boolean;
  error?: string;
  summary?: CaptureSummary;
  /** Mean CPU of the runner process over the capture, % of one core. */
  cpuPercent?: number;
  peakRssMb?: number;
  /** Warnings the runner gave while it ran (cannot keep up, updates lost). */
  warnings: string[];
  /** Set when the run passed the bench's per-client deadline and was stopped: seconds from its start. */
  stoppedAfterS?: number;
}

/**
 * The `capture` command's document (`capture --format json`).
 * @title epicsperf capture --format json
 */
export interface CaptureDocument {
  schema: typeof CAPTURE_FORMAT;
  /** The command's options, by name, with the PVs captured and the file written. */
  options: Record<string, unknown>;
  run: CaptureRun;
}

/** One load step of the bench's capture workload. */
export interface CaptureStep {
  /** 'scalar': counters at a rate; 'array': the IOC's waveform at a rate. */
  kind: 'scalar' | 'array';
  pvs: Count;
  /** Elements per update (1 for scalars). */
  elements: Count;
  rateHz: number;
  /** Offered load, updates per second and MB/s of data (values + per-update columns). */
  offeredUpdatesS: number;
  offeredMBs: number;
}

export interface CaptureStepResult {
  client: string;
  step: CaptureStep;
  run: CaptureRun;
  /** Measured over the run: updates and MB of data written per second. */
  updatesS?: number;
  mbS?: number;
  lost: number;
  /** No update lost, no flush slower than the period, no error. */
  kept: boolean;
}

export interface CaptureBenchClient {
  client: string;
  /** The highest load step sustained with zero loss (undefined: none). */
  best?: CaptureStepResult;
  /** The step that lost updates or failed, when one did. */
  limit?: CaptureStepResult;
}

export interface CaptureBenchResults {
  seconds: number;
  flushMs: number;
  /** The disk's own sequential write rate in the same run (MB/s, fsync at the end). */
  diskMBs?: number;
  diskError?: string;
  /** The study's figure for comparison: MB/s that pandablocks wrote to HDF5. */
  studyMBs: [number, number];
  steps: CaptureStepResult[];
  clients: CaptureBenchClient[];
}
