// `epicsperf bench [snapshot|monitor|array|array-put|latency|capture|headroom|load|all]`: every client on the quick profile (or --full),
// one comparison table per workload on stdout, progress on stderr, and every run kept as JSON and
// HTML in the results folder.
import { InvalidArgumentError, type Command } from 'commander';
import { doctor } from '../doctor.js';
import { CLIENTS, captureClients as capturing, findClient, type Workload } from '../clients/index.js';
import { compactResults, parseSnapshotWorkload, runBench, SNAPSHOT_WORKLOADS } from '../bench/suite.js';
import { PROFILES } from '../bench/profiles.js';
import { benchHtml } from '../report/html.js';
import { renderBench } from '../report/bench.js';
import { writeAtomic } from '../atomic.js';
import { ensureWritable, keepRun, resultsDir } from '../results/store.js';
import { exitOnSignals, parseClientList, placement, prepareClients, type HostOpts } from './common.js';
import { BenchProgress } from './progress.js';
import {
  arrayElementsOption,
  arrayRateOption,
  arrayTypeOption,
  formatOption,
  hostsOption,
  intArg,
  keysOption,
  placeOption,
  rateOption,
  recordsOption,
  samplesOption,
  timeoutOption,
} from './options.js';
import { UsageError } from '../errors.js';
import { countOption, latencyTypeOption, sizesOption } from './latency-options.js';
import { headroomStep } from '../bench/headroom.js';
import { headroomStepLabel, type HeadroomStep } from '../results/index.js';
import { LOAD_SECONDS, LOAD_STEPS, loadWorkload } from '../bench/load.js';

const WORKLOADS = ['snapshot', 'monitor', 'array', 'array-put', 'latency', 'capture', 'headroom', 'load', 'all'];

interface Opts extends HostOpts {
  full?: boolean;
  clients?: string;
  repeat?: number;
  deadline?: number;
  out?: string;
  html?: string;
  resultsDir?: string;
  keep: boolean;
  format: 'table' | 'markdown' | 'json';
  timeout?: number;
  records?: number;
  samples?: number;
  rate?: number;
  snapshots?: string;
  arrayElements?: number;
  arraySamples?: number;
  arrayRate?: number | 'max';
  captureSeconds?: number;
  captureFlushPeriod?: number;
  arrayType?: string;
  latencySizes?: number[];
  latencyType?: string;
  latencyCount?: number;
  headroomSeconds?: number;
  headroomSteps?: HeadroomStep[];
  steps?: number[];
  stepSeconds?: number;
}

/** Options that change a profile's workloads: given any of them, the run is `custom`. */
const SHAPING = [
  'repeat',
  'timeout',
  'records',
  'samples',
  'rate',
  'snapshots',
  'arrayElements',
  'arraySamples',
  'arrayRate',
  'arrayType',
  'latencySizes',
  'latencyType',
  'latencyCount',
  'captureSeconds',
  'captureFlushPeriod',
  'deadline',
  'headroomSeconds',
  'headroomSteps',
  'steps',
  'stepSeconds',
] as const;

/** The families `bench all` runs on a profile. */
export function familiesInAll(p: (typeof PROFILES)[keyof typeof PROFILES]['workloads']): string[] {
  return [
    'snapshot',
    'monitor',
    ...(p.array.inAll ? ['array'] : []),
    ...(p.arrayPut.inAll ? ['array-put'] : []),
    ...(p.latency.inAll ? ['latency'] : []),
    ...(p.capture?.inAll ? ['capture'] : []),
    ...(p.headroom?.inAll ? ['headroom'] : []),
  ];
}

export function register(program: Command): void {
  const q = PROFILES.quick;
  const f = PROFILES.full;
  const both = (a: unknown, b: unknown) => `quick ${String(a)}, --full ${String(b)}`;
  const fc = f.workloads.capture!;
  const fh = f.workloads.headroom!;
  program
    .command('bench')
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .description(
      'run every client on the workloads, compare them, and keep the results (quick profile by default; --full for the published workloads)',
    )
    .argument(
      '[workload]',
      `snapshot, monitor, array, array-put, latency, capture, headroom, load, or all (quick: ${familiesInAll(q.workloads).join(', ')}; --full: ${familiesInAll(f.workloads).join(', ')})`,
      'all',
    )
    .option(
      '--full',
      `the published workloads: snapshots ${f.workloads.snapshot.join(', ')}, ${f.repeat} runs each, no client deadline (bench capture and bench headroom always run the full profile's)`,
    )
    .option('--clients <list>', 'comma-separated clients (default: every client that runs the workload)')
    .option('--repeat <n>', `runs per client and workload (${both(q.repeat, f.repeat)})`, intArg(1, 100))
    .option(
      '--deadline <s>',
      `seconds one client may take on one workload run, from its start, before it is stopped (${both(`${String(q.clientDeadlineS)} beyond the run's own time`, 'none')})`,
      intArg(1, 86_400),
    )
    .option('--results-dir <dir>', 'where every run is kept (default: $EPICSPERF_RESULTS, else results/ under EPICSPERF_HOME)')
    .option('--no-keep', 'do not keep this run in the results folder')
    .option('--out <file>', 'also write the JSON results (environment, options, every raw figure) here')
    .option('--html <file>', 'also write the HTML report here')
    .addOption(formatOption(['table', 'markdown', 'json'] as const))
    .addOption(timeoutOption().default(undefined))
    .option(
      '--snapshots <ids>',
      `snapshot workloads, N+M: N names that exist, M missing, e.g. ${SNAPSHOT_WORKLOADS.map((w) => w.id).join(', ')} (${both(q.workloads.snapshot.join(','), f.workloads.snapshot.join(','))})`,
    )
    .addOption(recordsOption().default(undefined))
    .addOption(samplesOption().default(undefined))
    .addOption(rateOption().default(undefined))
    .addOption(
      arrayElementsOption(
        f.workloads.array.elements,
        1,
        50_000_000,
        `array, array-put: elements of the waveform (${both(q.workloads.array.elements, f.workloads.array.elements)})`,
      ).default(undefined),
    )
    .option(
      '--array-samples <n>',
      `array: updates to receive per run; array-put: puts per run (${both(q.workloads.array.samples, f.workloads.array.samples)})`,
      intArg(2, 10_000),
    )
    .addOption(arrayRateOption('max', false, "array: the IOC's refresh rate in Hz, or max (as fast as it can)").default(undefined))
    .option('--capture-seconds <s>', `capture: seconds each client captures at each load step (${fc.seconds})`, intArg(1, 3600))
    .option('--capture-flush-period <ms>', `capture: flush period (${fc.flushMs})`, intArg(10, 600_000))
    .option('--headroom-seconds <s>', `headroom: seconds of updates each client receives at each step (${fh.seconds})`, intArg(1, 600))
    .option(
      '--headroom-steps <list>',
      `headroom: the ramp, RECORDSxHZ,... lowest first (${fh.steps.map((x) => `${x.records}x${x.rateHz}`).join(',')})`,
      parseHeadroomSteps,
    )
    .option('--steps <list>', `load: runners per host at each step, lowest first (${LOAD_STEPS.join(',')})`, parseLoadSteps)
    .option(
      '--step-seconds <s>',
      `load: seconds each step is measured for, once every runner has connected and a one-second warm-up has passed (${LOAD_SECONDS})`,
      intArg(1, 600),
    )
    .addOption(
      arrayTypeOption('array, array-put: element type of the waveform (double, float, int64, int32, int16, int8)').default(
        undefined,
        'double',
      ),
    )
    .addOption(
      sizesOption('--latency-sizes').default(undefined, both(q.workloads.latency.sizes.join(','), f.workloads.latency.sizes.join(','))),
    )
    .addOption(latencyTypeOption('--latency-type').default(undefined, 'double'))
    .addOption(
      countOption('--latency-count').default(undefined, both(q.workloads.latency.samplesPerSize, f.workloads.latency.samplesPerSize)),
    )
    .action(async (workload: string, opts: Opts) => {
      if (!WORKLOADS.includes(workload))
        throw new UsageError(`workload must be ${WORKLOADS.slice(0, -1).join(', ')} or all, got "${workload}"`);
      if ((opts.steps !== undefined || opts.stepSeconds !== undefined) && workload !== 'load') {
        throw new UsageError(`--steps and --step-seconds are options of bench load, not of bench ${workload}`);
      }
      // Capture, headroom and load raise the load until updates are lost: they are not in the quick
      // profile, and `bench capture` / `bench headroom` / `bench load` run the full profile's workload.
      const profile =
        opts.full || workload === 'capture' || workload === 'headroom' || workload === 'load' ? PROFILES.full : PROFILES.quick;
      const p = profile.workloads;
      const custom = SHAPING.some((k) => opts[k] !== undefined);
      const families = workload === 'all' ? familiesInAll(p) : [workload];
      const captureOnly = workload === 'capture';
      const captureList = families.includes('capture') ? captureClients(captureOnly ? opts.clients : undefined) : [];
      // Latency has a row for every client: those that cannot run it say why.
      const clients = captureOnly
        ? captureList.map((c) => findClient(c)!)
        : opts.clients === undefined
          ? CLIENTS.filter(
              (c) =>
                families.includes('latency') || families.some((w) => c.workloads.includes(servedBy(w))) || captureList.includes(c.name),
            )
          : parseClientList(opts.clients, workload === 'all' || workload === 'latency' ? 'all' : servedBy(workload));
      const ids = (opts.snapshots ?? p.snapshot.join(','))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      const snapshots = ids.map(parseSnapshotWorkload);
      const deadline = opts.deadline ?? profile.clientDeadlineS;
      const captureWorkload = families.includes('capture')
        ? { clients: captureList, seconds: opts.captureSeconds ?? fc.seconds, flushMs: opts.captureFlushPeriod ?? fc.flushMs }
        : undefined;
      // The deadline bounds each capture run (one client at one load step), start and close included.
      if (captureWorkload && opts.deadline !== undefined && opts.deadline <= captureWorkload.seconds) {
        throw new UsageError(
          `--deadline (${deadline} s) must be longer than a capture step (--capture-seconds ${captureWorkload.seconds})`,
        );
      }
      const dir = opts.resultsDir ?? resultsDir();
      if (opts.keep) ensureWritable(dir);
      exitOnSignals();
      const python = await prepareClients(clients, true, families.includes('snapshot'));
      const pl = await placement(opts, clients, python, families.includes('snapshot'));
      const report = await doctor();
      const progress = new BenchProgress();
      const results = await runBench({
        placement: pl,
        clients,
        workloads: {
          snapshot: families.includes('snapshot') ? snapshots : [],
          monitor: families.includes('monitor'),
          array: families.includes('array')
            ? {
                elements: opts.arrayElements ?? p.array.elements,
                samples: opts.arraySamples ?? p.array.samples,
                rate: opts.arrayRate ?? p.array.rate,
                ...(opts.arrayType && { type: opts.arrayType }),
              }
            : undefined,
          arrayPut: families.includes('array-put')
            ? {
                elements: opts.arrayElements ?? p.arrayPut.elements,
                samples: opts.arraySamples ?? p.arrayPut.samples,
                type: opts.arrayType ?? 'double',
              }
            : undefined,
          latency: families.includes('latency')
            ? {
                sizes: opts.latencySizes ?? p.latency.sizes,
                elementType: opts.latencyType ?? p.latency.elementType,
                samplesPerSize: opts.latencyCount ?? p.latency.samplesPerSize,
              }
            : undefined,
          capture: captureWorkload,
          headroom: families.includes('headroom')
            ? { seconds: opts.headroomSeconds ?? fh.seconds, steps: opts.headroomSteps ?? fh.steps }
            : undefined,
          load: families.includes('load')
            ? loadWorkload({
                steps: opts.steps ?? LOAD_STEPS,
                records: opts.records ?? p.monitor.records,
                rate: opts.rate ?? p.monitor.rate,
                stepSeconds: opts.stepSeconds ?? LOAD_SECONDS,
              })
            : undefined,
        },
        repeat: opts.repeat ?? profile.repeat,
        timeoutMs: opts.timeout ?? profile.timeoutMs,
        records: opts.records ?? p.monitor.records,
        samples: opts.samples ?? p.monitor.samples,
        rate: opts.rate ?? p.monitor.rate,
        profile: custom ? 'custom' : profile.name,
        clientDeadlineS: deadline,
        // A profile's deadline is counted beyond the time the run asks for (30 s of samples get 30 s more).
        ...(opts.deadline === undefined && deadline !== undefined && { clientDeadlineBeyondWork: true }),
        python,
        report,
        onProgress: (s) => progress.phaseUpdate(s),
        onStep: (e) => progress.step(e),
      }).finally(() => pl.close());
      progress.done();
      const json = JSON.stringify(compactResults(results), null, 2) + '\n';
      const html = await benchHtml(results);
      if (opts.out) writeAtomic(opts.out, json);
      if (opts.html) writeAtomic(opts.html, html);
      process.stdout.write(opts.format === 'json' ? json : renderBench(results, opts.format === 'markdown'));
      if (opts.keep) {
        const kept = keepRun(dir, results, json, html);
        process.stderr.write(
          `epicsperf: took ${Math.round(results.durationS ?? 0)} s; report: ${kept.html}\nepicsperf: results: ${kept.json}\n`,
        );
      }
    });
}

/** The client workload a bench family needs (headroom and load are the monitor workload at rising steps). */
const servedBy = (family: string): Workload => (family === 'headroom' || family === 'load' ? 'monitor' : (family as Workload));

/** `--steps 1,2,4,8`: runners per host at each step, each step more than the one before. */
export function parseLoadSteps(v: string): number[] {
  const steps = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((x) => {
      const n = Number(x);
      if (!/^\d+$/.test(x) || !(n >= 1 && n <= 1000)) throw new InvalidArgumentError(`"${x}" is not a number of runners from 1 to 1000`);
      return n;
    });
  if (steps.length === 0) throw new InvalidArgumentError('no step given');
  // a client that gives way at a step skips every later one: a smaller step after a larger one would never run
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]! <= steps[i - 1]!)
      throw new InvalidArgumentError(`each step must run more runners than the one before (${steps[i]} after ${steps[i - 1]})`);
  }
  return steps;
}

/** `--headroom-steps 1000x10,2000x50`: the ramp, each step's load above the one before. */
export function parseHeadroomSteps(v: string): HeadroomStep[] {
  const steps = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
    .map((x) => {
      const m = /^(\d+)x(\d+(?:\.\d+)?)$/.exec(x);
      const records = Number(m?.[1]);
      const rate = Number(m?.[2]);
      if (!m || !(records >= 1 && records <= 100_000) || !(rate > 0 && rate <= 10_000)) {
        throw new InvalidArgumentError(`"${x}" is not RECORDSxHZ (1-100000 records, 0-10000 Hz), e.g. 1000x10`);
      }
      return headroomStep(records, rate);
    });
  if (steps.length === 0) throw new InvalidArgumentError('no step given');
  // a client that fails a step skips every later one: a lower step after a higher one would never run
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]!.offeredUpdatesS <= steps[i - 1]!.offeredUpdatesS) {
      throw new InvalidArgumentError(
        `each step must offer more updates/s than the one before (${headroomStepLabel(steps[i]!)} after ${headroomStepLabel(steps[i - 1]!)})`,
      );
    }
  }
  return steps;
}

/** The capture workload's clients: --clients, each one that can capture, or all of them. */
function captureClients(list: string | undefined): string[] {
  const all = capturing();
  if (list === undefined) return all;
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const n of names) {
    if (!all.includes(n)) throw new UsageError(`client ${n} does not run the capture workload: choose from ${all.join(', ')}`);
  }
  if (names.length === 0) throw new UsageError('--clients is empty');
  return [...new Set(names)];
}
