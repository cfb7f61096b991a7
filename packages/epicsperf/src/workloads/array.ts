// The array workload: each client monitors one large waveform the built-in IOC refreshes as fast
// as it can (or at a given rate), every element checked; after arrayPerformance. Its waveform
// options are the array-put workload's too.
import { Option } from 'commander';
import type { ArrayType } from '../ioc/index.js';
import { DEFAULTS } from '../defaults.js';
import { arrayElementsOption, arrayRateOption, arrayTypeOption, intArg } from '../options.js';
import { figure, plural } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { arrayTable, summarizeArray } from '../report/array.js';
import { groupByClient } from '../report/table.js';
import type { ArrayWorkload, BenchResults, MonitorRun } from '../results/index.js';
import { repeatMonitor } from './monitor.js';
import { type BenchWorkload, type OptionValues, type ProfileName, serving, value, byProfile, profileOption } from './workload.js';

/** Each profile's array: a quick look at 1M doubles, the full profile's arrayPerformance size. */
export const ARRAY_DEFAULTS: Record<ProfileName, Omit<ArrayWorkload, 'type'>> = {
  quick: { elements: 1_000_000, samples: 10, rate: 'max' },
  full: { elements: DEFAULTS.benchArrayElements, samples: DEFAULTS.benchArraySamples, rate: DEFAULTS.benchArrayRate },
};

/** The waveform's options, which the array and array-put workloads share. */
export const WAVEFORM_OPTIONS = {
  elements: arrayElementsOption(
    ARRAY_DEFAULTS.full.elements,
    1,
    50_000_000,
    `array, array-put: elements of the waveform (${byProfile(ARRAY_DEFAULTS, (d) => d.elements)})`,
  ).default(undefined),
  samples: new Option(
    '--array-samples <n>',
    `array: updates to receive per run; array-put: puts per run (${byProfile(ARRAY_DEFAULTS, (d) => d.samples)})`,
  ).argParser(intArg(2, 10_000)),
  type: profileOption(
    arrayTypeOption('array, array-put: element type of the waveform (double, float, int64, int32, int16, int8)'),
    'double',
  ),
};

/** The waveform's size and updates from the options given, else the profile's. */
export function waveform(o: OptionValues, d: { elements: number; samples: number }) {
  return {
    elements: value<number>(o, 'arrayElements') ?? d.elements,
    samples: value<number>(o, 'arraySamples') ?? d.samples,
  };
}

const table = (r: NonNullable<BenchResults['array']>, markdown = false) =>
  arrayTable(summarizeArray(groupByClient<MonitorRun>(r.runs)), markdown);

const title = (a: ArrayWorkload) =>
  `Array: one ${a.elements.toLocaleString('en-US')}-element ${a.type ?? 'double'} waveform refreshed ${a.rate === 'max' ? 'as fast as the IOC can' : `at ${a.rate} Hz`}, ${a.samples} updates per run`;

export const array: BenchWorkload = {
  name: 'array',
  serves: 'array',
  ramp: false,
  inAll: { quick: true, full: false },
  options: [
    WAVEFORM_OPTIONS.elements,
    WAVEFORM_OPTIONS.samples,
    profileOption(
      arrayRateOption('max', false, "array: the IOC's refresh rate in Hz, or max (as fast as it can)"),
      byProfile(ARRAY_DEFAULTS, (d) => d.rate),
    ),
    WAVEFORM_OPTIONS.type,
  ],
  ask: (o, profile) => {
    const type = value<ArrayType>(o, 'arrayType');
    return {
      array: {
        ...waveform(o, ARRAY_DEFAULTS[profile]),
        rate: value<number | 'max'>(o, 'arrayRate') ?? ARRAY_DEFAULTS[profile].rate,
        ...(type && { type }),
      },
    };
  },
  steps: (w, ready, repeat) => (w.array ? repeat * serving(ready, 'array').length : 0),
  async run(w, ctx, results) {
    const aw = w.array;
    if (!aw) return;
    // The IOC refreshes the waveform at the given rate (by default as fast as it can); a client that
    // keeps up sees every update.
    const ioc = await ctx.placement.startIoc({
      records: 1,
      rate: 0,
      arrayElements: aw.elements,
      arrayRate: aw.rate,
      ...(aw.type && { arrayType: aw.type }),
    });
    try {
      const deadline = ctx.deadline(typeof aw.rate === 'number' ? aw.samples / aw.rate : 0);
      results.array = {
        workload: aw,
        ...(await repeatMonitor(ctx, 'array', `array ${aw.elements.toLocaleString('en-US')}`, deadline, {
          env: ioc.env,
          names: [`${ioc.prefix}ARRAY`],
          samples: aw.samples,
          rate: 1,
          iocMeter: ioc.meter,
          array: { elements: aw.elements, ...(aw.type && { type: aw.type }), iocStats: () => ioc.stats() },
        })),
      };
    } finally {
      await ioc.stop();
    }
  },
  figures: (r) =>
    r.array
      ? [
          {
            key: 'array',
            title: title(r.array.workload),
            figure: 'elements received per second',
            unit: 'millions',
            better: 'higher' as const,
            stealPercent: r.array.stealPercent,
            clients: figure<MonitorRun>(
              r.array.runs,
              (x) => (x.stoppedAfterS !== undefined ? undefined : x.array?.mElementsPerSecond),
              (x) => {
                const a = x.array;
                if (!a) return [];
                const p: string[] = [];
                if (a.corrupt)
                  p.push(
                    `${plural(a.corrupt, 'corrupt array')}${a.corruptUpdates?.length ? ` (${a.corruptUpdates.slice(0, 2).join('; ')})` : ''}`,
                  );
                if (a.valueErrors) p.push(`${plural(a.valueErrors, 'update')} went backwards`);
                return p;
              },
            ),
          },
        ]
      : [],
  text: (r, markdown) => (r.array ? `\n${title(r.array.workload)}${stealNote(r.array.stealPercent)}\n\n${table(r.array, markdown)}` : ''),
  html: async (r) => (r.array ? { details: { text: table(r.array) } } : {}),
};
