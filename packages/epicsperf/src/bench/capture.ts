// The bench's capture workload: each capture client writes the built-in IOC's updates to HDF5
// while the load rises step by step (counters, then the waveform) until updates are lost; beside
// it, the disk's own sequential write rate measured in the same run. Each run is capture/'s
// operation (capture/orchestrate.ts): bench/ sits above capture/, never the other way.
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL } from '../hosts/host.js';
import { Placement } from './placement.js';
import { startCapture, DEFAULT_GAP_CHECK, type CaptureClient } from '../capture/orchestrate.js';
import { climb } from './ramp.js';
import type { CaptureBenchClient, CaptureBenchResults, CaptureRun, CaptureStep, CaptureStepResult } from '../results/capture.js';

/** The study's figure: pandablocks wrote 50 MB/s to HDF5 (60 with the web UI off). */
export const STUDY_MBS: [number, number] = [50, 60];
const ROW_BYTES = 19;

export interface CaptureBenchOptions {
  clients: readonly CaptureClient[];
  python: string;
  /** Where the clients and the IOC run (default: all here). */
  placement?: Placement;
  /** Seconds each client captures at each step. */
  seconds: number;
  flushMs: number;
  /** Where the files go (default: the temporary directory); each is removed after its step. */
  dir?: string;
  /** Steps to run (default CAPTURE_STEPS). */
  steps?: readonly CaptureStep[];
  onProgress?: (text: string) => void;
  /** The per-client deadline of one capture run (one client at one step), ms; undefined: none. */
  clientDeadlineMs?: number;
  /** Wraps each capture run (one client at one step): the bench's progress steps. */
  runStep?: (label: string, client: string, body: () => Promise<CaptureStepResult>) => Promise<CaptureStepResult>;
  /** `n` (step, client) runs counted up front will not run (a client dropped out of a kind). */
  onSkip?: (n: number) => void;
}

function scalar(pvs: number, rateHz: number): CaptureStep {
  return { kind: 'scalar', pvs, elements: 1, rateHz, offeredUpdatesS: pvs * rateHz, offeredMBs: (pvs * rateHz * (8 + ROW_BYTES)) / 1e6 };
}
function array(elements: number, rateHz: number): CaptureStep {
  return { kind: 'array', pvs: 1, elements, rateHz, offeredUpdatesS: rateHz, offeredMBs: (rateHz * (8 * elements + ROW_BYTES)) / 1e6 };
}

/** Counters at rising rates, then the waveform at rising sizes and rates. */
export const CAPTURE_STEPS: readonly CaptureStep[] = [
  scalar(1000, 10),
  scalar(1000, 50),
  scalar(1000, 100),
  scalar(2000, 100),
  scalar(4000, 100),
  array(100_000, 10),
  array(1_000_000, 5),
  array(1_000_000, 10),
  array(1_000_000, 20),
  array(1_000_000, 40),
  array(2_000_000, 40),
];

/** A step of `--capture-steps`: `1000x10` (counters x Hz), `array:1000000x10` (elements x Hz). */
export const CAPTURE_STEP = /^(array:)?(\d+)x(\d+)$/;

/** The steps of `--capture-steps` (checked against CAPTURE_STEP), else CAPTURE_STEPS. */
export function captureSteps(asked: readonly string[] | undefined): readonly CaptureStep[] {
  if (!asked) return CAPTURE_STEPS;
  return asked.map((a) => {
    const [, what, n, hz] = CAPTURE_STEP.exec(a)!;
    return what ? array(Number(n), Number(hz)) : scalar(Number(n), Number(hz));
  });
}

/** Sequential write rate of the disk under `dir`: `mb` MB in 8 MB writes, then fsync (MB/s). */
export function diskWriteRate(dir: string, mb = 512): number {
  const path = join(dir, 'disk-rate.bin');
  const block = Buffer.alloc(8 * 1024 * 1024, 0x5a);
  const fd = openSync(path, 'w');
  try {
    const t0 = performance.now();
    let written = 0;
    while (written < mb * 1e6) written += writeSync(fd, block);
    fsyncSync(fd);
    return written / 1e6 / ((performance.now() - t0) / 1000);
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

export async function runCaptureBench(o: CaptureBenchOptions): Promise<CaptureBenchResults> {
  const progress = o.onProgress ?? (() => {});
  const dir = mkdtempSync(join(o.dir ?? tmpdir(), 'epicsperf-capture-bench-'));
  const results: CaptureBenchResults = { seconds: o.seconds, flushMs: o.flushMs, studyMBs: STUDY_MBS, steps: [], clients: [] };
  try {
    const pl = o.placement ?? Placement.local(o.python);
    const elsewhere = o.clients.filter((c) => pl.hostOf(c).name !== LOCAL);
    progress('capture: measuring the disk');
    try {
      // The disk measured is this host's: a client writing on another host's disk is not held to it.
      if (elsewhere.length) throw new Error(`${elsewhere.join(', ')} write${elsewhere.length === 1 ? 's' : ''} on another host's disk`);
      results.diskMBs = diskWriteRate(dir);
    } catch (err) {
      results.diskError = (err as Error).message;
    }
    // a client that lost updates at a step of one kind goes on to the other kind only
    const runStep = o.runStep ?? ((_label, _client, body) => body());
    results.steps = await climb<CaptureStep, CaptureClient, CaptureStepResult>({
      steps: o.steps ?? CAPTURE_STEPS,
      clients: o.clients,
      lane: (step) => step.kind,
      held: (r) => r.kept,
      ...(o.onSkip && { onSkip: o.onSkip }),
      open: async (step) => {
        const ioc =
          step.kind === 'scalar'
            ? await pl.startIoc({ records: step.pvs, rate: step.rateHz, arrayElements: 0 })
            : await pl.startIoc({ records: 1, rate: 0, arrayElements: step.elements, arrayRate: step.rateHz });
        const names = step.kind === 'scalar' ? ioc.counterNames() : [`${ioc.prefix}ARRAY`];
        const label =
          step.kind === 'scalar'
            ? `${step.pvs} counters x ${step.rateHz} Hz`
            : `${step.elements.toLocaleString('en-US')} doubles x ${step.rateHz} Hz`;
        return {
          close: () => ioc.stop(),
          run: (client) =>
            runStep(label, client, async () => {
              // Here, a file of this run's folder; on an agent, a name in its own (hosts/wire.ts).
              const { host } = pl.runOn(client);
              const file = host && host.name !== LOCAL ? `${client}.h5` : join(dir, `${client}.h5`);
              const run = await startCapture({
                client,
                python: o.python,
                ...(host && { host }),
                env: { ...ioc.env },
                names,
                out: file,
                flushMs: o.flushMs,
                force: true,
                gapCheck: DEFAULT_GAP_CHECK,
                durationS: o.seconds,
                connectTimeoutMs: 30_000,
                onStatus: (s) => progress(s),
                ...(o.clientDeadlineMs !== undefined && { clientDeadlineMs: o.clientDeadlineMs }),
              }).done;
              if (!host || host.name === LOCAL) rmSync(file, { force: true });
              const lost = run.summary?.pvs.reduce((a, p) => a + p.lost, 0) ?? 0;
              compactRun(run);
              const s = run.summary;
              const res: CaptureStepResult = { client, step, run, lost, kept: run.ok && !!s && lost === 0 && s.slowFlushes === 0 };
              if (s && s.seconds > 0) {
                res.updatesS = s.updates / s.seconds;
                res.mbS = s.bytes / 1e6 / s.seconds;
              }
              return res;
            }),
        };
      },
    });
    results.clients = o.clients.map((client): CaptureBenchClient => {
      const mine = results.steps.filter((r) => r.client === client);
      const kept = mine.filter((r) => r.kept).sort((a, b) => (b.mbS ?? 0) - (a.mbS ?? 0));
      const limit = mine.find((r) => !r.kept);
      return { client, ...(kept[0] && { best: kept[0] }), ...(limit && { limit }) };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return results;
}

/**
 * A run as stored: the per-PV rows only of the PVs that lost updates or were left out (the first
 * 20; a scalar step has thousands), and the first 20 warnings.
 */
export function compactRun(run: CaptureRun): CaptureRun {
  if (run.summary) {
    const pvs = run.summary.pvs;
    run.summary.pvs = pvs.filter((p) => p.lost > 0 || p.skipped !== undefined).slice(0, 20);
  }
  run.warnings = run.warnings.slice(0, 20);
  return run;
}
