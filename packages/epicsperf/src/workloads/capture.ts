// The capture workload: each capture client writes the built-in IOC's updates to HDF5 while the
// load rises step by step until updates are lost, beside the disk's own rate (bench/capture.ts).
import { InvalidArgumentError, Option } from 'commander';
import { UsageError } from '../errors.js';
import { intArg, listArg } from '../options.js';
import { captureClients as capturing } from '../clients/index.js';
import { CAPTURE_STEP, captureSteps, runCaptureBench } from '../bench/capture.js';
import type { CaptureClient } from '../capture/orchestrate.js';
import { captureOutcome } from '../report/outcomes.js';
import { plural, type ClientFigure } from '../report/figures.js';
import { captureBenchTable, captureBenchText, captureBenchTitle, captureStepsTable, stepLabel } from '../report/capture.js';
import { stat, type CaptureWorkload } from '../results/index.js';
import { type BenchWorkload, value, type Workloads } from './workload.js';
import type { ClientSpec } from '../clients/index.js';

/** The full profile's capture (the only one: a ramp is not in the quick profile). */
export const CAPTURE_DEFAULTS: CaptureWorkload = { seconds: 5, flushMs: 1000 };

/** The clients that can capture: `list` (checked), or all of them. */
function captureClients(list?: string): string[] {
  const all = capturing();
  if (list === undefined) return all;
  const names = listArg(list);
  for (const n of names) {
    if (!all.includes(n)) throw new UsageError(`client ${n} does not run the capture workload: choose from ${all.join(', ')}`);
  }
  if (names.length === 0) throw new UsageError('--clients is empty');
  return [...new Set(names)];
}

/** `--capture-steps`: counters `NxHZ` (1-100,000 at 1-1000 Hz), arrays `array:NxHZ` (1-10,000,000 doubles). */
function parseSteps(v: string): string[] {
  const steps = listArg(v);
  if (steps.length === 0) throw new InvalidArgumentError('give at least one step');
  for (const step of steps) {
    const m = CAPTURE_STEP.exec(step);
    const max = m?.[1] ? 10_000_000 : 100_000;
    if (!m || Number(m[2]) < 1 || Number(m[2]) > max || Number(m[3]) < 1 || Number(m[3]) > 1000)
      throw new InvalidArgumentError(
        `"${step}" is not a step: counters x Hz (1000x10, up to 100000 counters) or array:elements x Hz (array:1000000x10, up to 10000000 elements), 1-1000 Hz`,
      );
  }
  return steps;
}

/** The capture workload's clients that are available here, in the order asked. */
const captureClientsOf = (cw: NonNullable<Workloads['capture']>, ready: readonly ClientSpec[]): CaptureClient[] =>
  cw.clients.filter((c) => ready.some((r) => r.name === c)) as CaptureClient[];

export const capture: BenchWorkload = {
  name: 'capture',
  ramp: true,
  inAll: { quick: false, full: false },
  options: [
    new Option('--capture-seconds <s>', `capture: seconds each client captures at each load step (${CAPTURE_DEFAULTS.seconds})`).argParser(
      intArg(1, 3600),
    ),
    new Option('--capture-flush-period <ms>', `capture: flush period (${CAPTURE_DEFAULTS.flushMs})`).argParser(intArg(10, 600_000)),
    new Option(
      '--capture-steps <list>',
      'capture: the load steps, climbed in order: 1000x10 (counters x Hz), array:1000000x10 (elements x Hz) (default: counters from 1000x10 to 4000x100, then arrays to array:2000000x40)',
    ).argParser(parseSteps),
  ],
  clients: captureClients,
  ask: (o, _profile, only) => {
    const steps = value<string[]>(o, 'captureSteps');
    return {
      capture: {
        // Alone, it runs the clients asked for; in `bench all`, those of them that capture.
        clients: captureClients(only ? value<string>(o, 'clients') : undefined),
        seconds: value<number>(o, 'captureSeconds') ?? CAPTURE_DEFAULTS.seconds,
        flushMs: value<number>(o, 'captureFlushPeriod') ?? CAPTURE_DEFAULTS.flushMs,
        ...(steps && { steps }),
      },
    };
  },
  // The deadline bounds each capture run (one client at one load step), start and close included.
  check: (o, asked) => {
    const deadline = value<number>(o, 'deadline');
    const seconds = asked.capture?.seconds;
    if (deadline !== undefined && seconds !== undefined && deadline <= seconds)
      throw new UsageError(`--deadline (${deadline} s) must be longer than a capture step (--capture-seconds ${seconds})`);
  },
  // Every load step for every client at most (a client that loses updates skips the rest of that
  // kind, and the total shrinks then).
  steps: (w, ready) => (w.capture ? captureClientsOf(w.capture, ready).length * captureSteps(w.capture.steps).length : 0),
  async run(w, ctx, results) {
    const cw = w.capture;
    if (!cw) return;
    results.capture = await runCaptureBench({
      clients: captureClientsOf(cw, ctx.ready),
      python: ctx.python,
      placement: ctx.placement,
      seconds: cw.seconds,
      flushMs: cw.flushMs,
      steps: captureSteps(cw.steps),
      onProgress: ctx.progress,
      ...ctx.deadline(cw.seconds),
      runStep: ctx.steps.ramp('capture', captureOutcome),
      onSkip: (n) => ctx.steps.skip(n),
    });
  },
  // The main figure is the highest MB/s a client wrote to HDF5 with zero loss while the load rose.
  // Losing updates at a later step is how the limit is found, not a failure; losing them at the
  // first step (no figure at all), a run that failed, or a stop at the deadline is.
  figures: (r) => {
    const c = r.capture;
    if (!c) return [];
    const references = [
      ...(c.diskMBs !== undefined ? [{ label: 'disk (sequential)', value: c.diskMBs }] : []),
      { label: 'the study (pandablocks)', value: c.studyMBs[0], to: c.studyMBs[1] },
    ];
    return [
      {
        key: 'capture',
        title: captureBenchTitle(c),
        figure: 'highest MB/s written with zero loss',
        unit: 'MB/s',
        better: 'higher' as const,
        references,
        clients: c.clients.map((cl): ClientFigure => {
          const mine = c.steps.filter((x) => x.client === cl.client);
          const mbS = cl.best?.mbS;
          const values = mbS !== undefined && Number.isFinite(mbS) ? [mbS] : [];
          const problems: string[] = [];
          const first = mine[0];
          if (!first) problems.push('no load step ran');
          else if (!cl.best && !first.run.error)
            problems.push(`${plural(first.lost, 'update')} lost at its first step (${stepLabel(first)})`);
          for (const x of mine) if (x.run.error) problems.push(`${stepLabel(x)}: ${x.run.error}`);
          const stopped = mine.find((x) => x.run.stoppedAfterS !== undefined)?.run.stoppedAfterS;
          return {
            client: cl.client,
            version: mine.find((x) => x.run.summary?.version)?.run.summary?.version,
            values,
            stat: stat(values),
            problems,
            ...(stopped !== undefined && { stoppedAfterS: stopped }),
          };
        }),
      },
    ];
  },
  text: (r, markdown) => (r.capture ? captureBenchText(r.capture, markdown) : ''),
  // Where each client's zero-loss figure was reached, with its CPU and memory there, against the
  // disk's rate of the same run, and the step that lost updates.
  html: async (r) =>
    r.capture ? { findings: captureBenchTable(r.capture), details: { text: `Every load step:\n\n${captureStepsTable(r.capture)}` } } : {},
};
