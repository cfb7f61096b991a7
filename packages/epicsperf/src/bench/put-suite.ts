// `bench array-put` and `bench latency`: every client that serves them, in turn, repeated, each
// workload against its own built-in IOC; fills the results' arrayPut and latency entries.
import type { ArrayType } from '../ioc/index.js';
import type { Placement } from './placement.js';
import { stealMeter } from '../procstat.js';
import type { ClientSpec } from '../clients/index.js';
import type { DeadlineFor } from './profiles.js';
import { arrayPutOutcome, latencyOutcome } from '../report/outcomes.js';
import { runArrayPut } from './array-put.js';
import { runLatency } from './latency.js';
import type { ArrayPutRun, ArrayPutWorkload, BenchResults, LatencyRun, LatencyWorkload } from '../results/index.js';

export interface PutSuiteOptions {
  arrayPut?: ArrayPutWorkload | undefined;
  latency?: LatencyWorkload | undefined;
  repeat: number;
  python: string;
  /** Where the clients and the IOC run. */
  placement: Placement;
  /** The deadline of one client on one run of so many seconds of its own (suite.ts). */
  deadline: DeadlineFor;
  /** The phase of the step under way. */
  onProgress?: (text: string) => void;
}

/** The bench's step counter (suite.ts Steps): reports each step's start and end. */
export interface StepRunner {
  run<T>(workload: string, client: string, run: number, repeat: number, body: () => Promise<T>, outcome: (r: T) => string): Promise<T>;
}

export async function runPutWorkloads(
  o: PutSuiteOptions,
  steps: StepRunner,
  ready: readonly ClientSpec[],
  results: BenchResults,
): Promise<void> {
  const progress = o.onProgress ?? (() => {});
  // Neither workload asks for a time of its own: each goes as fast as the client does.
  const deadline = o.deadline(0);
  if (o.arrayPut) {
    const w = o.arrayPut;
    const clients = ready.filter((c) => c.workloads.includes('array-put'));
    // The waveform itself stays still: only the put target works.
    const ioc = await o.placement.startIoc({
      records: 1,
      rate: 0,
      arrayElements: w.elements,
      arrayRate: 0,
      arrayType: w.type as ArrayType,
    });
    const runs: ArrayPutRun[] = [];
    const steal = stealMeter();
    try {
      for (let rep = 1; rep <= o.repeat; rep++) {
        for (const client of clients) {
          for (const callback of [true, false]) {
            const label = `array-put ${w.elements.toLocaleString('en-US')} ${callback ? 'completion' : 'no completion'}`;
            runs.push(
              await steps.run(
                label,
                client.name,
                rep,
                o.repeat,
                () =>
                  runArrayPut({
                    client,
                    python: o.python,
                    env: ioc.env,
                    name: `${ioc.prefix}ARRAY:PUT`,
                    workload: w,
                    callback,
                    ioc,
                    onProgress: progress,
                    ...deadline,
                    ...o.placement.runOn(client.name),
                  }),
                arrayPutOutcome,
              ),
            );
          }
        }
      }
    } finally {
      await ioc.stop();
    }
    results.arrayPut = { workload: w, runs, stealPercent: steal() };
  }
  if (o.latency) {
    const w = o.latency;
    const clients = ready.filter((c) => c.workloads.includes('latency'));
    // Every client asked for has a row: those that cannot run it say why.
    const cannot: LatencyRun[] = ready
      .filter((c) => !c.workloads.includes('latency'))
      .map((c) => ({ client: c.name, ok: false, unsupported: true, error: whyNoLatency(c), points: [] }));
    const ioc = await o.placement.startIoc({ records: 1, rate: 0, arrayElements: 0, latencyElements: Math.max(...w.sizes) });
    const runs: LatencyRun[] = [];
    const steal = stealMeter();
    try {
      for (let rep = 1; rep <= o.repeat; rep++) {
        for (const client of clients) {
          runs.push(
            await steps.run(
              `latency ${w.sizes.length} sizes`,
              client.name,
              rep,
              o.repeat,
              () =>
                runLatency({
                  client,
                  python: o.python,
                  env: ioc.env,
                  prefix: ioc.prefix,
                  workload: w,
                  onProgress: progress,
                  ...deadline,
                  ...o.placement.runOn(client.name),
                }),
              latencyOutcome,
            ),
          );
        }
      }
    } finally {
      await ioc.stop();
    }
    results.latency = { workload: w, runs: [...runs, ...cannot], stealPercent: steal() };
  }
}

/** Why a client has no latency row. */
export function whyNoLatency(c: ClientSpec): string {
  if (c.name === 'caget-procs') return 'a one-shot reader: it neither puts nor monitors';
  if (c.name.endsWith('-nonumpy')) return 'an array-monitor variant only; its numpy row puts';
  return `its runner does not put yet (${c.library} can put and monitor; not measured here)`;
}
