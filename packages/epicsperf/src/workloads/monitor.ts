// The monitor workload: each client monitors N counters of the built-in IOC at R Hz until it has
// S samples of each, every sample checked; after EPICSPyClientPerformance. `repeatMonitor` is
// every client of a monitor-shaped workload in turn (the array workload's too).
import { stealMeter } from '../procstat.js';
import { DEFAULTS } from '../defaults.js';
import { rateOption, recordsOption, samplesOption } from '../options.js';
import { runMonitor, type MonitorRunOptions } from '../bench/monitor.js';
import { monitorOutcome } from '../report/outcomes.js';
import { figure, plural } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { monitorTable, summarizeMonitor } from '../report/monitor.js';
import { groupByClient } from '../report/table.js';
import type { BenchResults, MonitorRun } from '../results/index.js';
import { type BenchWorkload, type ProfileName, serving, type SuiteContext, value, byProfile, profileOption } from './workload.js';

/** Each profile's monitor: the quick one 30 samples, the full one the study's. */
export const MONITOR_DEFAULTS: Record<ProfileName, { records: number; samples: number; rate: number }> = {
  quick: { records: DEFAULTS.records, samples: 30, rate: DEFAULTS.rate },
  full: { records: DEFAULTS.records, samples: DEFAULTS.samples, rate: DEFAULTS.rate },
};

/** `--records` and `--rate`: the monitor's size, which the load workload shares. */
export const RECORDS_OPTION = profileOption(recordsOption(), String(DEFAULTS.records));
export const RATE_OPTION = profileOption(rateOption(), String(DEFAULTS.rate));

/**
 * Every available client that serves `task`, `ctx.repeat` times in turn, against one running
 * IOC; the runs and the host's steal over them.
 */
export async function repeatMonitor(
  ctx: SuiteContext,
  task: 'monitor' | 'array',
  label: string,
  deadline: { clientDeadlineMs?: number },
  run: Pick<MonitorRunOptions, 'env' | 'names' | 'samples' | 'rate' | 'iocMeter' | 'array'>,
): Promise<{ runs: MonitorRun[]; stealPercent: number | undefined }> {
  const runs: MonitorRun[] = [];
  const steal = stealMeter();
  for (let rep = 1; rep <= ctx.repeat; rep++) {
    for (const client of serving(ctx.ready, task)) {
      const body = () =>
        runMonitor({
          ...run,
          task,
          client,
          python: ctx.python,
          onProgress: ctx.progress,
          ...ctx.placement.runOn(client.name),
          ...deadline,
        });
      runs.push(await ctx.steps.run(label, client.name, rep, ctx.repeat, body, monitorOutcome));
    }
  }
  return { runs, stealPercent: steal() };
}

const problems = (x: MonitorRun): string[] => {
  const c = x.check;
  if (!c) return [];
  const p: string[] = [];
  if (c.missedValues) p.push(`${plural(c.missedValues, 'update')} missed`);
  if (c.silentPvs) p.push(`${plural(c.silentPvs, 'PV')} silent`);
  if (c.valueErrors + c.timestampErrors + c.severityErrors + c.staleTimestamps) p.push('samples failed their checks');
  if (!c.ok && p.length === 0) p.push('sample check failed');
  return p;
};

const table = (r: NonNullable<BenchResults['monitor']>, markdown = false) =>
  monitorTable(summarizeMonitor(groupByClient<MonitorRun>(r.runs)), markdown);

export const monitor: BenchWorkload = {
  name: 'monitor',
  serves: 'monitor',
  ramp: false,
  inAll: { quick: true, full: true },
  options: [
    RECORDS_OPTION,
    profileOption(
      samplesOption(),
      byProfile(MONITOR_DEFAULTS, (d) => d.samples),
    ),
    RATE_OPTION,
  ],
  ask: () => ({ monitor: true }),
  runOptions: (o, profile) => {
    const d = MONITOR_DEFAULTS[profile];
    return {
      records: value<number>(o, 'records') ?? d.records,
      samples: value<number>(o, 'samples') ?? d.samples,
      rate: value<number>(o, 'rate') ?? d.rate,
    };
  },
  steps: (w, ready, repeat) => (w.monitor ? repeat * serving(ready, 'monitor').length : 0),
  async run(w, ctx, results) {
    if (!w.monitor) return;
    const { records, samples, rate } = ctx.run;
    const ioc = await ctx.placement.startIoc({ records, rate, arrayElements: 0 });
    try {
      results.monitor = await repeatMonitor(ctx, 'monitor', `monitor ${records}x${samples}`, ctx.deadline(samples / rate), {
        env: ioc.env,
        names: ioc.counterNames(),
        samples,
        rate,
        iocMeter: ioc.meter,
      });
    } finally {
      await ioc.stop();
    }
  },
  figures: (r) =>
    r.monitor
      ? [
          {
            key: 'monitor',
            title: `Monitor: ${plural(r.options.records, 'counter')} x ${r.options.samples} samples at ${r.options.rate} Hz`,
            figure: 'CPU of the client process',
            unit: '% of one core',
            better: 'lower' as const,
            stealPercent: r.monitor.stealPercent,
            clients: figure<MonitorRun>(r.monitor.runs, (x) => (x.stoppedAfterS !== undefined ? undefined : x.cpuPercent?.mean), problems),
          },
        ]
      : [],
  text: (r, markdown) => {
    if (!r.monitor) return '';
    const o = r.options;
    return (
      `\nMonitor: ${o.records} counters x ${o.samples} samples at ${o.rate} Hz (CPU of the client process, 100% = one core)${stealNote(r.monitor.stealPercent)}\n\n` +
      table(r.monitor, markdown)
    );
  },
  html: async (r) => (r.monitor ? { details: { text: table(r.monitor) } } : {}),
};
