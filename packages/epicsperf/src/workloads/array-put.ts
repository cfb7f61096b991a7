// The array-put workload: each client writes the waveform S times, each put waiting for its
// completion and then none waiting, and the IOC checks every element it receives.
import type { ArrayType } from '../ioc/index.js';
import { stealMeter } from '../procstat.js';
import { runArrayPut } from '../bench/array-put.js';
import { arrayPutOutcome } from '../report/outcomes.js';
import { figure, plural } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { arrayPutTable, arrayPutTitle, summarizeArrayPut } from '../report/array-put.js';
import type { ArrayPutRun } from '../results/index.js';
import { ARRAY_DEFAULTS, WAVEFORM_OPTIONS, waveform } from './array.js';
import { type BenchWorkload, serving, value } from './workload.js';

const MODES = [true, false];
const modeName = (callback: boolean) => (callback ? 'completion' : 'no completion');
const table = (runs: readonly ArrayPutRun[], markdown = false) => arrayPutTable(summarizeArrayPut(runs), markdown);

export const arrayPut: BenchWorkload = {
  name: 'array-put',
  serves: 'array-put',
  ramp: false,
  inAll: { quick: false, full: false },
  options: [WAVEFORM_OPTIONS.elements, WAVEFORM_OPTIONS.samples, WAVEFORM_OPTIONS.type],
  ask: (o, profile) => ({
    arrayPut: { ...waveform(o, ARRAY_DEFAULTS[profile]), type: value<ArrayType>(o, 'arrayType') ?? 'double' },
  }),
  // A step is one client in one mode.
  steps: (w, ready, repeat) => (w.arrayPut ? repeat * MODES.length * serving(ready, 'array-put').length : 0),
  async run(ws, ctx, results) {
    const w = ws.arrayPut;
    if (!w) return;
    // It asks for no time of its own: it goes as fast as the client does.
    const deadline = ctx.deadline(0);
    // The waveform itself stays still: only the put target works.
    const ioc = await ctx.placement.startIoc({
      records: 1,
      rate: 0,
      arrayElements: w.elements,
      arrayRate: 0,
      arrayType: w.type,
    });
    const runs: ArrayPutRun[] = [];
    const steal = stealMeter();
    try {
      for (let rep = 1; rep <= ctx.repeat; rep++) {
        for (const client of serving(ctx.ready, 'array-put')) {
          for (const callback of MODES) {
            const body = () =>
              runArrayPut({
                client,
                python: ctx.python,
                env: ioc.env,
                name: `${ioc.prefix}ARRAY:PUT`,
                workload: w,
                callback,
                ioc,
                onProgress: ctx.progress,
                ...deadline,
                ...ctx.placement.runOn(client.name),
              });
            const label = `array-put ${w.elements.toLocaleString('en-US')} ${modeName(callback)}`;
            runs.push(await ctx.steps.run(label, client.name, rep, ctx.repeat, body, arrayPutOutcome));
          }
        }
      }
    } finally {
      await ioc.stop();
    }
    results.arrayPut = { workload: w, runs, stealPercent: steal() };
  },
  // One entry per mode: the main figure is what the IOC received and checked per second, so a put
  // still queued does not count.
  figures: (r) => {
    const a = r.arrayPut;
    if (!a) return [];
    return MODES.flatMap((callback) => {
      const runs = a.runs.filter((x) => x.callback === callback);
      if (runs.length === 0) return [];
      return [
        {
          key: `array-put ${modeName(callback)}`,
          title: `${arrayPutTitle(a.workload)}, ${callback ? 'each waiting for its completion' : 'none waiting for completion'}`,
          figure: 'elements put and checked by the IOC per second',
          unit: 'millions',
          better: 'higher' as const,
          stealPercent: a.stealPercent,
          clients: figure<ArrayPutRun>(
            runs,
            (x) => (x.stoppedAfterS !== undefined ? undefined : x.ioc?.mElementsPerSecond),
            (x) => {
              const p: string[] = [];
              if (x.failedPuts) p.push(`${plural(x.failedPuts, 'put')} failed in the client`);
              if (x.ioc?.bad) p.push(`the IOC found ${plural(x.ioc.bad, 'bad put')}`);
              if (x.ioc && x.ioc.received < x.puts - x.failedPuts) p.push(`the IOC received ${x.ioc.received} of ${x.puts - x.failedPuts}`);
              if (x.ioc && x.puts < a.workload.samples && x.stoppedAfterS === undefined && !x.error)
                p.push(`${x.puts} of ${a.workload.samples} puts made`);
              return p;
            },
          ),
        },
      ];
    });
  },
  text: (r, markdown) =>
    r.arrayPut ? `\n${arrayPutTitle(r.arrayPut.workload)}${stealNote(r.arrayPut.stealPercent)}\n\n${table(r.arrayPut.runs, markdown)}` : '',
  html: async (r, key) => {
    const runs = r.arrayPut?.runs.filter((x) => key === `array-put ${modeName(x.callback)}`);
    return runs?.length ? { details: { text: table(runs) } } : {};
  },
};
