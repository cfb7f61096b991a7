// Server runner `node` (docs/runners.md, Server runners): this project's server (epics-client/server)
// publishing the crossing PVs over CA and PV Access, posting on command; each post's wall clock is
// kept, and given as the update's timestamp. With --counters, the counters P:CALC1..N, every value
// MINOR, which a ticker on the event loop's timers posts at --counter-rate Hz.
import { parseArgs } from 'node:util';
import { DbrType } from 'epics-client/ca';
import { Server, type ServedPv } from 'epics-client/server';
import { emit, fail, onCommand, packageVersion } from './protocol.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    prefix: { type: 'string' },
    int32: { type: 'string' },
    bytes: { type: 'string' },
    latency: { type: 'string' },
    counters: { type: 'string' },
    'counter-rate': { type: 'string' },
  },
});
if (positionals[0] !== 'serve') fail(`unknown task "${positionals[0] ?? ''}"`, 2);
if (values.prefix === undefined) fail('--prefix P is required', 2);
const sizes = (v: string | undefined): number[] => (v ?? '').split(',').filter(Boolean).map(Number);
const int32 = sizes(values.int32);
const bytes = sizes(values.bytes);
const latency = sizes(values.latency);
if ([...int32, ...bytes, ...latency].some((n) => !Number.isInteger(n) || n < 1)) fail('sizes are whole numbers from 1', 2);
const counters = Number(values.counters ?? 0);
const counterRate = Number(values['counter-rate'] ?? 0);
if (!Number.isInteger(counters) || counters < 0) fail(`--counters takes a whole number, got ${values.counters}`, 2);
if (!(counterRate >= 0)) fail(`--counter-rate takes a number of Hz, got ${values['counter-rate']}`, 2);

/** The wall clock in ms since the epoch, to the microsecond (Date.now() has only milliseconds). */
const wallMs = (): number => performance.timeOrigin + performance.now();

const P = values.prefix;
// CA carries the largest array: its bytes and the header.
const maxArrayBytes = Math.max(16384, 4 * Math.max(0, ...int32, ...bytes) + 8 * Math.max(0, ...latency) + 4096);
const server = await Server.start({ ca: { maxArrayBytes }, pva: {} }).catch((e: unknown) => fail(`cannot serve: ${(e as Error).message}`));
const pvs = new Map<string, { pv: ServedPv; make: (k: number) => number | Int32Array | Int8Array }>();
pvs.set(`${P}CROSS:DOUBLE`, { pv: server.pv(`${P}CROSS:DOUBLE`, { type: DbrType.DOUBLE, value: 0 }), make: (k) => k });
for (const n of int32) {
  const name = `${P}CROSS:INT32:${n}`;
  pvs.set(name, { pv: server.pv(name, { type: DbrType.LONG, value: new Int32Array(n) }), make: (k) => new Int32Array(n).fill(k) });
}
for (const n of bytes) {
  const name = `${P}CROSS:BYTES:${n}`;
  pvs.set(name, { pv: server.pv(name, { type: DbrType.CHAR, value: new Int8Array(n) }), make: (k) => new Int8Array(n).fill(k) });
}

// The round trip through the app: its put handler posts the elements put, then completes the put.
for (const [suffix, type, initial] of [
  ['DOUBLE', DbrType.DOUBLE, new Float64Array(1)],
  ['CHAR', DbrType.CHAR, new Int8Array(1)],
] as const) {
  if (!latency.length) break;
  // Room for 2 at least: a PV of one element is a scalar over PV Access, and these are arrays.
  const pv = server.pv(`${P}LATENCY:${suffix}`, { type, value: initial, maxCount: Math.max(2, latency[0]!) });
  pv.onPut = ({ value }) => ({ accept: true, value });
}

// The counters: MINOR at every value (status HIGH), as the built-in IOC's calc records with HIGH=0.
const MINOR_HIGH = { severity: 1, status: 4 };
const started = wallMs();
const counterPvs = Array.from({ length: counters }, (_, i) =>
  server.pv(`${P}CALC${i + 1}`, { type: DbrType.DOUBLE, value: 1, alarm: () => MINOR_HIGH }),
);
for (const c of counterPvs) c.post(1, { timestamp: started });
const ticked = { ticks: 0, tickTime: 0, counterValue: 1 };

/**
 * Runs `fn` at `hz` on an absolute schedule from now, post j at t0 + j/hz (a late one at once, none
 * skipped; more than 1 s behind, the schedule starts again from now); the returned function stops it.
 */
function every(hz: number, fn: () => void): () => void {
  const period = 1000 / hz;
  let next = performance.now() + period;
  let timer: NodeJS.Timeout | undefined;
  const run = (): void => {
    const now = performance.now();
    if (next < now - 1000) next = now;
    while (next <= now) {
      fn();
      next += period;
    }
    timer = setTimeout(run, Math.max(0, next - performance.now()));
  };
  timer = setTimeout(run, period);
  return () => clearTimeout(timer);
}

if (counters && counterRate > 0)
  every(counterRate, () => {
    const value = ticked.counterValue + 1;
    const t = wallMs();
    for (const c of counterPvs) c.post(value, { timestamp: t });
    Object.assign(ticked, { ticks: ticked.ticks + 1, tickTime: t / 1000, counterValue: value });
  });

// The load workload's fairness PV: counts at the rate of the last `ramp` command.
const ramp = counters ? server.pv(`${P}RAMP`, { type: DbrType.DOUBLE, value: 1, alarm: () => MINOR_HIGH }) : undefined;
ramp?.post(1, { timestamp: started });
let rampValue = 1;
let stopRamp = (): void => {};
function setRamp(hz: number): void {
  stopRamp();
  stopRamp = hz > 0 ? every(hz, () => ramp!.post(++rampValue, { timestamp: wallMs() })) : () => {};
}

/** (k, wall clock s) of every post since the last ship. */
let posts: number[] = [];

async function post(name: string, count: number, periodMs: number): Promise<void> {
  const target = pvs.get(name);
  if (!target) fail(`no PV ${name} here`, 2);
  const start = performance.now();
  for (let k = 1; k <= count; k++) {
    const wait = start + (k - 1) * periodMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // The value is made before the clock is read: the crossing starts when the app hands it over.
    const value = target.make(k);
    const t = wallMs();
    target.pv.post(value, { timestamp: t });
    posts.push(k, t / 1000);
  }
  emit({ ev: 'posted', name, count });
}

let queue = Promise.resolve();
onCommand((line) => {
  const [cmd, ...rest] = line.split(/\s+/);
  if (cmd === 'post') {
    const [name, count, period] = [rest[0] ?? '', Number(rest[1]), Number(rest[2])];
    if (!(count >= 1 && count <= 127) || !(period >= 0)) fail(`bad post command: ${line}`, 2);
    queue = queue.then(() => post(name, count, period));
  } else if (cmd === 'ship')
    queue = queue.then(() => {
      emit({ ev: 'posts', count: posts.length / 2 }, new Uint8Array(new Float64Array(posts).buffer));
      posts = [];
    });
  else if (cmd === 'stats') emit({ ev: 'stats', ...ticked, ...(ramp && { rampValue }), time: wallMs() / 1000 });
  else if (cmd === 'ramp') {
    const hz = Number(rest[0]);
    if (!ramp || rest.length !== 1 || !(hz >= 0 && hz <= 5000)) fail(`bad ramp command: ${line} (ramp HZ, 0-5000, with counters)`, 2);
    setRamp(hz);
    emit({ ev: 'ramped', hz });
  } else if (cmd === 'exit') void queue.then(() => server.close()).then(() => process.exit(0));
  else if (cmd) fail(`unknown command "${cmd}"`, 2);
});
emit({ ev: 'ready', server: 'node', version: packageVersion() });
