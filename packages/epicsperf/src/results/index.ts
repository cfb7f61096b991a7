// The result shapes that the orchestrator produces and the reporters read, and the versions of
// their JSON formats: data only, so the reports depend on data, not on the code that made it.
import type { CaptureBenchResults } from './capture.js';
import type { CrossingResults, CrossingWorkload } from './crossing.js';
import type { StormResults, StormWorkload } from './storm.js';
import type { LatencyFit, LatencyPoint } from './latency.js';
import type { HeadroomResults, HeadroomWorkload } from './headroom.js';
import type { LoadResults, LoadWorkload } from './load.js';
import type { MonitorRun, Stat, StealPercent } from './monitor.js';
import type { Integer, SnapshotRun } from 'epics-ops';

export * from './capture.js';
export * from './crossing.js';
export * from './storm.js';
export * from './latency.js';
export * from './headroom.js';
export * from './load.js';
export * from './monitor.js';
export { SNAPSHOT_FORMAT, type Integer, type SnapshotDocument, type SnapshotRow, type SnapshotRun } from 'epics-ops';

/** The format of kept runs, `--out` and `bench --format json`, written in their `schema` field. */
export const BENCH_FORMAT = 'epicsperf/bench@2';

/** Element types of PREFIX:ARRAY (`--array-type`). */
export const ARRAY_TYPES = ['double', 'float', 'int64', 'int32', 'int16', 'int8'] as const;
export type ArrayType = (typeof ARRAY_TYPES)[number];
/** The servers the built-in IOC runs on: EPICS base's (RSRV and QSRV, through softioc) or this project's. */
export const IOC_SERVERS = ['softioc', 'node', 'pvagw', 'ca-gateway-rs', 'pva-gateway-rs'] as const;
export type IocServer = (typeof IOC_SERVERS)[number];

/** The array-put workload: arrays of `elements` put `samples` times per run to PREFIX:ARRAY:PUT. */
export interface ArrayPutWorkload {
  elements: Integer;
  samples: Integer;
  type: ArrayType;
}

export interface ArrayPutRun {
  client: string;
  /** The host it ran on (a name of `hosts`), when not the orchestrator's. */
  host?: string;
  version?: string;
  /** Each put waited for its completion (CA WRITE_NOTIFY, PVA put reply), or was sent without. */
  callback: boolean;
  ok: boolean;
  error?: string;
  /** Puts the client made, and those that failed on its side. */
  puts: Integer;
  failedPuts: Integer;
  /** From the first put's start to the last put's return, as the client saw it. */
  putsPerSecond?: number;
  mElementsPerSecond?: number;
  /** CPU of the runner process, % of one core, sampled once a second (with the samples). */
  cpuPercent?: Stat & { samples: number[] };
  peakRssMb?: number;
  /** CPU of the IOC over the same window, % of one core. */
  iocCpuPercent?: Stat;
  /** What the IOC received and checked (every element and the length of each put), counted on its side. */
  ioc?: {
    received: Integer;
    elements: Integer;
    /** Puts whose elements, length or order were wrong. */
    bad: Integer;
    findings: string[];
    /** From the first put's arrival to the last's, at the IOC. */
    putsPerSecond: number;
    mElementsPerSecond: number;
  };
  /** Set when the run passed its per-client deadline and was stopped: seconds from its start. */
  stoppedAfterS?: number;
}

export interface LatencyRun {
  client: string;
  /** The host it ran on (a name of `hosts`), when not the orchestrator's. */
  host?: string;
  version?: string;
  ok: boolean;
  error?: string;
  /** The client cannot run this workload (it does not put, or only reads once); `error` says why. */
  unsupported?: boolean;
  points: LatencyPoint[];
  fit?: { roundTrip?: LatencyFit; oneWay?: LatencyFit };
  /** Set when the run passed its per-client deadline and was stopped: seconds from its start. */
  stoppedAfterS?: number;
}

export interface LatencyWorkload {
  /** Array sizes, elements. */
  sizes: Integer[];
  /** 'double' or 'char' (the byte-array case). */
  elementType: string;
  /** Rounds per size. */
  samplesPerSize: Integer;
}

/** A snapshot workload: `connected` names the IOC serves and `missing` it does not (id `N+M`). */
export interface SnapshotWorkload {
  id: string;
  connected: Integer;
  missing: Integer;
}

export interface ArrayWorkload {
  /** Elements of the waveform. */
  elements: Integer;
  /** Updates to receive per run. */
  samples: Integer;
  /** How often the IOC refreshes the waveform: Hz, or 'max' (as fast as it can). */
  rate: number | 'max';
  /** Element type of the waveform (default double). */
  type?: ArrayType;
  /** Every element of every update compared (tests), not only the first, middle and last. */
  checkAll?: boolean;
}

export interface CaptureWorkload {
  /** Seconds each client captures at each load step. */
  seconds: number;
  /** Flush period of the capture, ms. */
  flushMs: number;
  /** The load steps asked for (`--capture-steps`): `1000x10` (counters x Hz), `array:1000000x10`
   *  (elements x Hz); none: the full ramp. */
  steps?: string[];
}

/** The options of a bench run, as stored with its results. */
export interface BenchRunOptions {
  workloads: {
    snapshot: readonly SnapshotWorkload[];
    monitor: boolean;
    array?: ArrayWorkload | undefined;
    arrayPut?: ArrayPutWorkload | undefined;
    latency?: LatencyWorkload | undefined;
    /** The capture workload (src/bench/capture.ts): its clients, seconds per step and flush period. */
    capture?: (CaptureWorkload & { clients: readonly string[] }) | undefined;
    /** The headroom workload (src/bench/headroom.ts): its steps and seconds per step. */
    headroom?: HeadroomWorkload | undefined;
    /** The load workload (src/bench/load.ts): its runners per host at each step, counters, rate and seconds. */
    load?: LoadWorkload | undefined;
    /** The crossing workload (src/bench/crossing.ts): its servers, payloads, posts and their period. */
    crossing?: CrossingWorkload | undefined;
    /** The connect storm (src/bench/storm.ts): its servers, channels and timeout. */
    storm?: StormWorkload | undefined;
  };
  repeat: Integer;
  /** The snapshot's timeout per PV, ms. */
  timeoutMs: number;
  /** The monitor's counters. */
  records: Integer;
  /** The monitor's samples per PV. */
  samples: Integer;
  /** The monitor's update rate, Hz. */
  rate: number;
  clients: string[];
  /** How runner processes were scheduled (real-time priority is withheld from every client alike). */
  scheduling: string;
  /** `quick` (the default: one short run each), `full` (--full: the published workloads) or
   *  `custom` (a profile with its workloads changed by options). */
  profile: 'quick' | 'full' | 'custom';
  /** Deadline of one client on one workload, s (a client past it is stopped; undefined: none). */
  clientDeadlineS?: number | undefined;
  /** The deadline was counted beyond the run's own time (a profile's: the samples at their rate,
   *  a step's seconds), not from the run's start (--deadline). */
  clientDeadlineBeyondWork?: boolean;
}

/** A host of a run spread over agents (`--hosts`): where it is, its environment, what ran there. */
export interface HostRecord {
  /** `local` (the orchestrator's host) or the name given in `--hosts`. */
  name: string;
  /** This machine's name, or the agent's endpoint. */
  address: string;
  /** The agent's own name for its machine. */
  machine?: string;
  /** Its `doctor` report; `error` says why there is none (the agent was lost). */
  environment?: EnvironmentReport;
  error?: string;
  /** The clients placed there, and `ioc`. */
  runs: string[];
}

/**
 * A bench run's results: a kept run, `--out`, `bench --format json`.
 * @title epicsperf bench results (kept runs, --out, --format json)
 */
export interface BenchResults {
  schema: typeof BENCH_FORMAT;
  /** @format date-time */
  startedAt: string;
  /** From the start to the last result, s. */
  durationS?: number;
  /** The machine's host name. */
  host: string;
  /** The `epicsperf doctor --format json` report. */
  environment: EnvironmentReport;
  /** A run spread over agents: every host it used (rows then say which host they ran on). */
  hosts?: HostRecord[] | undefined;
  options: BenchRunOptions;
  /** Clients that could not run at all, with the reason. */
  unavailable: { client: string; reason: string }[];
  /** The snapshot workloads, each with its clients' runs. */
  snapshot: { workload: SnapshotWorkload; runs: SnapshotRun[]; stealPercent?: StealPercent | undefined }[];
  monitor?: { runs: MonitorRun[]; stealPercent?: StealPercent | undefined } | undefined;
  array?: { workload: ArrayWorkload; runs: MonitorRun[]; stealPercent?: StealPercent | undefined } | undefined;
  /** The array-put workload: arrays put to PREFIX:ARRAY:PUT, checked by the IOC. */
  arrayPut?: { workload: ArrayPutWorkload; runs: ArrayPutRun[]; stealPercent?: StealPercent | undefined } | undefined;
  /** The latency workload: put an array, wait for the client's own update of it, per size. */
  latency?: { workload: LatencyWorkload; runs: LatencyRun[]; stealPercent?: StealPercent | undefined } | undefined;
  /** The capture workload: each client's load steps, the disk's rate, the study's figure. */
  capture?: CaptureBenchResults | undefined;
  /** The headroom workload: scalar monitors at rising (records x rate) steps until a client gives
   *  way; each client's steps, its best and what it did past it. */
  headroom?: HeadroomResults | undefined;
  /** The load workload: N monitor runners of one client on each host against one IOC, N rising step
   *  by step until updates are lost, latency grows or a runner fails; each client's steps, and how
   *  many clients it served. */
  load?: LoadResults | undefined;
  /** The crossing workload: each server's posts to a reference client, per protocol and payload. */
  crossing?: CrossingResults | undefined;
  /** The connect storm: one client's snapshot of many channels of a fresh server, per server and protocol. */
  storm?: StormResults | undefined;
}

export interface LibraryStatus {
  version?: string;
  error?: string;
}

export interface EnvironmentReport {
  epicsperf: string;
  node: string;
  os: { platform: string; release: string; arch: string };
  cpu: { model: string; cores: Integer };
  memoryBytes: number;
  python: { executable: string; kind: 'external' | 'managed'; ready: boolean; version?: string; error?: string };
  libraries: Record<string, LibraryStatus>;
  /** The JDK, Maven, cargo and rustc that build the Java and Rust runners (reports before them have none). */
  toolchains?: Record<string, LibraryStatus>;
}
