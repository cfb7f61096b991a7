// The built-in IOC served by this project's own server (epics-client/server) instead of softioc:
// the same PVs, types, metadata, rates and behaviours as python/epicsperf_runners/ioc.py, the same
// arguments, the same lines out (NAME=value for the client environment, then `ready`) and the same
// `stats` / `reset-puts` questions on stdin. Run as a process of its own (startIoc with
// server 'node'), so that its CPU and memory are measured as the C IOC's are.
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { ALARM_STATUS_NAMES, DbrType, EPICS_EPOCH_OFFSET, type DbrMetadata, type NativeType } from 'epics-client/ca';
import { Server, type Alarm, type PvDefinition, type ServedPv, type ServedValue } from 'epics-client/server';
import type { ScalarType } from 'epics-client/pva';
import { counterNames, SETTING_KINDS, SETTING_STATES, settingValue } from './index.js';

/** The highest rate PREFIX:RAMP is processed at (Hz): a put above it is clipped (the ao's DRVH). */
const RAMP_MAX_HZ = 5000;
const [MINOR, MAJOR, INVALID] = [1, 2, 3];
/** A record's time before it is first processed: 0 past the EPICS epoch (caget prints "<undefined>"). */
const NEVER = EPICS_EPOCH_OFFSET * 1000;
const [HIHI, HIGH, LOLO, LOW, UDF] = (['HIHI', 'HIGH', 'LOLO', 'LOW', 'UDF'] as const).map((n) => ALARM_STATUS_NAMES.indexOf(n)) as [
  number,
  number,
  number,
  number,
  number,
];

type Elements = Float64Array | Float32Array | Int32Array | Int16Array | Int8Array | BigInt64Array;

/** --array-type: the CA native type (int64 goes as doubles, as RSRV sends it), the PVA element, the array kind. */
type ElementsClass = { new (n: number): Elements; new (b: ArrayBuffer): Elements; readonly name: string };
const ARRAY_TYPES: Record<string, { ca: NativeType; pva: ScalarType; of: ElementsClass }> = {
  double: { ca: DbrType.DOUBLE, pva: 'double', of: Float64Array },
  float: { ca: DbrType.FLOAT, pva: 'float', of: Float32Array },
  int64: { ca: DbrType.DOUBLE, pva: 'long', of: BigInt64Array },
  int32: { ca: DbrType.LONG, pva: 'int', of: Int32Array },
  int16: { ca: DbrType.SHORT, pva: 'short', of: Int16Array },
  int8: { ca: DbrType.CHAR, pva: 'byte', of: Int8Array },
};

/**
 * The array's updates are made on a thread of their own, as the C IOC's updater thread makes
 * them (the main thread only posts them): asked for update k, it answers with an array of the
 * type whose every element is k (wrapped), set first and copied in doubling runs.
 */
const FILLER = `
const { parentPort, workerData } = require('node:worker_threads');
const Elements = globalThis[workerData.type];
parentPort.on('message', (k) => {
  const a = new Elements(workerData.elements);
  if (a.length) a[0] = Elements === BigInt64Array ? BigInt(k) : k;
  for (let n = 1; n < a.length; n *= 2) a.copyWithin(n, 0, Math.min(n, a.length - n));
  parentPort.postMessage(a.buffer, [a.buffer]);
});
`;

function options() {
  const { values } = parseArgs({
    options: {
      records: { type: 'string' },
      rate: { type: 'string' },
      prefix: { type: 'string' },
      'name-style': { type: 'string' },
      'array-elements': { type: 'string' },
      'array-rate': { type: 'string' },
      'array-type': { type: 'string', default: 'double' },
      'latency-elements': { type: 'string', default: '0' },
      settings: { type: 'string', default: '0' },
      'ca-port': { type: 'string' },
      'pva-port': { type: 'string' },
      'pva-broadcast-port': { type: 'string' },
      'repeater-port': { type: 'string' },
      listen: { type: 'string', default: '127.0.0.1' },
      'access-security': { type: 'boolean', default: false },
      'watch-stdin': { type: 'boolean', default: false },
    },
  });
  const num = (k: keyof typeof values): number => Number(values[k]);
  return {
    records: num('records'),
    rate: num('rate'),
    prefix: values.prefix ?? 'TEST:',
    nameStyle: values['name-style'] === 'padded' ? ('padded' as const) : ('plain' as const),
    arrayElements: num('array-elements'),
    arrayRate: values['array-rate'] === 'max' ? ('max' as const) : num('array-rate'),
    arrayType: ARRAY_TYPES[values['array-type'] ?? 'double'] ?? ARRAY_TYPES.double!,
    latencyElements: num('latency-elements'),
    settings: num('settings'),
    caPort: num('ca-port'),
    pvaPort: num('pva-port'),
    pvaBroadcastPort: num('pva-broadcast-port'),
    repeaterPort: num('repeater-port'),
    listen: values.listen ?? '127.0.0.1',
    accessSecurity: values['access-security'] ?? false,
    watchStdin: values['watch-stdin'] ?? false,
    wrap: { int8: 256, int16: 65536 }[values['array-type'] ?? ''],
  };
}

type Options = ReturnType<typeof options>;

/** A record's alarm limits (HIHI, HIGH, LOW, LOLO with their severities), as it checks a value. */
function limits(l: { hihi?: [number, number]; high?: [number, number]; low?: [number, number]; lolo?: [number, number] }) {
  return (v: ServedValue): Alarm | undefined => {
    const x = typeof v === 'number' ? v : Number((v as ArrayLike<number>)[0]);
    if (l.hihi && x >= l.hihi[0]) return { severity: l.hihi[1], status: HIHI };
    if (l.lolo && x <= l.lolo[0]) return { severity: l.lolo[1], status: LOLO };
    if (l.high && x >= l.high[0]) return { severity: l.high[1], status: HIGH };
    if (l.low && x <= l.low[0]) return { severity: l.low[1], status: LOW };
    return undefined;
  };
}

/** HIGH=0 with HSV=MINOR, as the counters and the ramp have: every value MINOR. */
const alwaysMinor = limits({ high: [0, MINOR] });
const calcMetadata: DbrMetadata = { precision: 0, upperWarningLimit: 0 };

/** A put clipped to the drive limits, as an ao or a longout clips it. */
const clipped = (lo: number, hi: number) => (put: { value: ServedValue }) => ({
  accept: true as const,
  value: Math.min(hi, Math.max(lo, Number(put.value))),
});

class Stats {
  arrayUpdates = 0;
  arrayTime = 0;
  puts = 0;
  putElements = 0;
  putBad = 0;
  putFindings: string[] = [];
  putFirstTime = 0;
  putLastTime = 0;
  ticks = 0;
  tickTime = 0;

  resetPuts(): void {
    this.puts = this.putElements = this.putBad = 0;
    this.putFindings = [];
    this.putFirstTime = this.putLastTime = 0;
  }

  answer(counterValue: number, rampValue: number): string {
    const { arrayUpdates, arrayTime, puts, putElements, putBad, putFindings, putFirstTime, putLastTime, ticks, tickTime } = this;
    const time = Date.now() / 1000;
    const out = {
      arrayUpdates,
      arrayTime,
      time,
      puts,
      putElements,
      putBad,
      putFindings,
      putFirstTime,
      putLastTime,
      ticks,
      tickTime,
      counterValue,
      rampValue,
    };
    return `stats ${JSON.stringify(out)}\n`;
  }
}

/** The checks of PREFIX:ARRAY:PUT (array_stats.PutChecker): every element of put k equals k, the length is the waveform's. */
function putChecker(o: Options, stats: Stats) {
  let last: number | undefined;
  return (value: ServedValue): void => {
    const v = value as ArrayLike<number | bigint>;
    const n = v.length;
    const problems: string[] = [];
    const first = n ? Number(v[0]) : undefined;
    if (n !== o.arrayElements) problems.push(`${n} elements, expected ${o.arrayElements}`);
    for (let i = 1; i < n; i++)
      if (Number(v[i]) !== first) {
        problems.push(`element ${i} is ${Number(v[i])}, the first ${first}`);
        break;
      }
    if (first !== undefined) {
      let step = last !== undefined ? first - last : 1;
      if (o.wrap) step = ((step % o.wrap) + o.wrap) % o.wrap;
      if (first !== 1 && step !== 1) problems.push(`came after ${last}`);
      last = first;
    }
    const now = Date.now() / 1000;
    if (stats.puts === 0) stats.putFirstTime = now;
    stats.puts++;
    stats.putElements += n;
    stats.putLastTime = now;
    if (problems.length) {
      stats.putBad++;
      if (stats.putFindings.length < 5) stats.putFindings.push(`put ${stats.puts} (first element ${first}): ${problems.join(', ')}`);
    }
  };
}

/** Calls `fn` at `rate()` Hz on an absolute schedule (several calls in one turn when behind; resynchronised when far behind). */
function every(rate: () => number, fn: () => void): void {
  let next = performance.now();
  const loop = (): void => {
    const r = rate();
    if (!(r > 0)) {
      next = performance.now();
      setTimeout(loop, 50);
      return;
    }
    const now = performance.now();
    if (next < now - 1000) next = now;
    while (next <= now) {
      fn();
      next += 1000 / r;
    }
    setTimeout(loop, Math.max(0, next - performance.now()));
  };
  loop();
}

async function main(): Promise<void> {
  const o = options();
  // CA carries an int64 waveform as doubles: 8 bytes per element covers every type.
  const maxArrayBytes = Math.max(16384, 8 * Math.max(o.arrayElements, o.latencyElements) + 4096);
  const loopback = o.listen.startsWith('127.');
  const clientEnv: Record<string, string> = {
    EPICS_CA_SERVER_PORT: String(o.caPort),
    EPICS_CA_REPEATER_PORT: String(o.repeaterPort),
    EPICS_CA_MAX_ARRAY_BYTES: String(maxArrayBytes),
    EPICS_PVA_SERVER_PORT: String(o.pvaPort),
    EPICS_PVA_BROADCAST_PORT: String(o.pvaBroadcastPort),
  };
  if (loopback)
    Object.assign(clientEnv, {
      EPICS_CA_ADDR_LIST: o.listen,
      EPICS_CA_AUTO_ADDR_LIST: 'NO',
      EPICS_PVA_ADDR_LIST: o.listen,
      EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    });
  // The server's own environment, as ioc.py sets it for RSRV and QSRV: beacons follow the address
  // lists (unicast to the loopback address there), the interface is the one asked for.
  Object.assign(process.env, clientEnv);
  if (o.listen !== '0.0.0.0') process.env.EPICS_CAS_INTF_ADDR_LIST = process.env.EPICS_PVAS_INTF_ADDR_LIST = o.listen;
  const server = await Server.start({
    ca: { port: o.caPort, maxArrayBytes },
    pva: { port: o.pvaPort, udpPort: o.pvaBroadcastPort },
  });

  const P = o.prefix;
  const K = `${P}KIND:`;
  const pv = (name: string, def: Partial<PvDefinition> & { value: ServedValue }): ServedPv => server.pv(name, def);
  const stats = new Stats();

  // Counters (calc records: VAL+1+B at every tick, PINI: 1 at start, MINOR through HIGH=0).
  const skip = pv(`${P}SKIP`, { type: DbrType.LONG, value: 0, className: 'longout' });
  const counters = counterNames(o.prefix, o.nameStyle, o.records).map((name) =>
    pv(name, { type: DbrType.DOUBLE, value: 1, className: 'calc', metadata: calcMetadata, alarm: alwaysMinor }),
  );
  let count = 1;
  if (o.rate > 0)
    every(
      () => o.rate,
      () => {
        count += 1 + Math.max(0, Number(skip.state.value));
        if (Number(skip.state.value) > 0) skip.post(0);
        for (const c of counters) c.post(count);
        stats.ticks++;
        stats.tickTime = Date.now() / 1000;
      },
    );

  // The ramp: counts up by 1 at RAMP:RATE Hz (0: still), a put taking effect at the next update.
  const rampRate = pv(`${P}RAMP:RATE`, {
    type: DbrType.DOUBLE,
    value: 0,
    className: 'ao',
    metadata: { precision: 1, lowerControlLimit: 0, upperControlLimit: RAMP_MAX_HZ },
  });
  rampRate.onPut = clipped(0, RAMP_MAX_HZ);
  const ramp = pv(`${P}RAMP`, { type: DbrType.DOUBLE, value: 1, className: 'calc', metadata: calcMetadata, alarm: alwaysMinor });
  every(
    () => Number(rampRate.state.value),
    () => ramp.post(Number(ramp.state.value) + 1),
  );

  // The kinds: one PV per CA native type with metadata, arrays, values at the edges.
  const wf = (name: string, type: NativeType, value: ServedValue, metadata: DbrMetadata = {}, extra: Partial<PvDefinition> = {}) =>
    pv(name, {
      type,
      value,
      className: 'waveform',
      metadata: {
        ...metadata,
        upperControlLimit: metadata.upperDisplayLimit,
        lowerControlLimit: metadata.lowerDisplayLimit,
      },
      ...extra,
    });
  pv(`${K}STRING`, { type: DbrType.STRING, value: 'hello epics' });
  wf(`${K}SHORT`, DbrType.SHORT, -1234, { units: 'cnt', upperDisplayLimit: 1000, lowerDisplayLimit: -1000 });
  wf(`${K}FLOAT`, DbrType.FLOAT, 1.5, { units: 'V', precision: 2, upperDisplayLimit: 10, lowerDisplayLimit: -10 });
  pv(`${K}ENUM`, { type: DbrType.ENUM, value: 1, metadata: { enumStrings: ['Off', 'On', 'Fault'] } });
  wf(`${K}CHAR`, DbrType.CHAR, 200);
  // A longout and an ao with display, drive and alarm limits (HIHI, HIGH, LOW, LOLO: MAJOR, MINOR, MINOR, MAJOR).
  const analog = (name: string, type: NativeType, value: number, m: DbrMetadata, [hihi, high]: [number, number]) => {
    const lo = m.lowerControlLimit!;
    const hi = m.upperControlLimit!;
    const p = pv(name, {
      type,
      value,
      metadata: { ...m, upperAlarmLimit: hihi, upperWarningLimit: high, lowerWarningLimit: -high, lowerAlarmLimit: -hihi },
      alarm: limits({ hihi: [hihi, MAJOR], high: [high, MINOR], low: [-high, MINOR], lolo: [-hihi, MAJOR] }),
    });
    p.onPut = clipped(lo, hi);
  };
  analog(
    `${K}LONG`,
    DbrType.LONG,
    42,
    { units: 'counts', upperDisplayLimit: 100, lowerDisplayLimit: -100, upperControlLimit: 1000, lowerControlLimit: -1000 },
    [90, 80],
  );
  analog(
    `${K}DOUBLE`,
    DbrType.DOUBLE,
    3.14159,
    { units: 'mm', precision: 4, upperDisplayLimit: 10, lowerDisplayLimit: -10, upperControlLimit: 100, lowerControlLimit: -100 },
    [9, 8],
  );
  const longText = 'A long string held in a char waveform, longer than the 40 characters of DBR_STRING.';
  wf(`${K}LONGSTRING`, DbrType.CHAR, Int8Array.from([...new TextEncoder().encode(longText), 0]), {}, { maxCount: 256, pvaElement: 'byte' });
  const smallArrays: [string, NativeType, ArrayLike<number>][] = [
    ['CHAR', DbrType.CHAR, Uint8Array.from({ length: 10 }, (_, i) => i * 25)],
    ['SHORT', DbrType.SHORT, Int16Array.from({ length: 10 }, (_, i) => i * -300)],
    ['LONG', DbrType.LONG, Int32Array.from({ length: 10 }, (_, i) => i * 100000)],
    ['FLOAT', DbrType.FLOAT, Float32Array.from({ length: 10 }, (_, i) => i * 0.5)],
    ['DOUBLE', DbrType.DOUBLE, Float64Array.from({ length: 10 }, (_, i) => i * 1.25)],
  ];
  for (const [suffix, type, values] of smallArrays) wf(`${K}ARR:${suffix}`, type, values);
  wf(
    `${K}DYN`,
    DbrType.DOUBLE,
    Float64Array.from({ length: 10 }, (_, i) => i),
    {},
    { maxCount: 100 },
  );
  for (const [suffix, value] of [
    ['NAN', NaN],
    ['INF', Infinity],
    ['NINF', -Infinity],
    ['DBLMAX', Number.MAX_VALUE],
  ] as const)
    pv(`${K}${suffix}`, { type: DbrType.DOUBLE, value, alarm: (v) => (Number.isNaN(v) ? { severity: INVALID, status: UDF } : undefined) });
  pv(`${K}LONGMAX`, { type: DbrType.LONG, value: 2147483647 });
  pv(`${K}LONGMIN`, { type: DbrType.LONG, value: -2147483648 });
  wf(`${K}SHORTMAX`, DbrType.SHORT, 32767);
  wf(`${K}SHORTMIN`, DbrType.SHORT, -32768);
  wf(`${K}CHARMAX`, DbrType.CHAR, 255);
  pv(`${K}EMPTY`, { type: DbrType.STRING, value: '' });
  pv(`${K}STR39`, { type: DbrType.STRING, value: '0123456789abcdefghijklmnopqrstuvwxyzABC' });
  // A put that completes 3 s late: the value is taken at once, the put's completion (and
  // SLOW:DONE) 3 s after, as the ao's forward link to a delaying seq record does in the C IOC.
  const slow = pv(`${K}SLOW`, { type: DbrType.DOUBLE, value: 1, metadata: { precision: 1 } });
  const slowDone = pv(`${K}SLOW:DONE`, { type: DbrType.LONG, value: 0 });
  // Never processed before a put: UDF, with no severity and no time (the C IOC's records without PINI).
  for (const p of [slow, slowDone]) p.post(p.state.value, { severity: 0, status: UDF, timestamp: NEVER });
  slow.onPut = async (put) => {
    slow.post(put.value);
    await new Promise((r) => setTimeout(r, 3000));
    slowDone.post(1);
    return { accept: true };
  };
  if (o.accessSecurity) {
    // KIND:GATED is writable only while KIND:GATE is 1; KIND:LOCKED never.
    const gate = pv(`${K}GATE`, { type: DbrType.LONG, value: 1 });
    const gated = pv(`${K}GATED`, { type: DbrType.LONG, value: 5 });
    pv(`${K}LOCKED`, { type: DbrType.LONG, value: 7, readOnly: true });
    gate.onPut = (put) => {
      gated.readOnly = Number(put.value) !== 1;
      return { accept: true };
    };
  }

  // Settings: PVs that hold what a client last wrote, of mixed types.
  for (let i = 1; i <= o.settings; i++) {
    const name = `${P}SET:${i}`;
    const value = settingValue(i);
    const kind = SETTING_KINDS[i % 5];
    if (kind === 'ao') pv(name, { type: DbrType.DOUBLE, value, metadata: { precision: 3, units: 'mm' } });
    else if (kind === 'longout') pv(name, { type: DbrType.LONG, value });
    else if (kind === 'mbbo') pv(name, { type: DbrType.ENUM, value, metadata: { enumStrings: [...SETTING_STATES] } });
    else if (kind === 'stringout') pv(name, { type: DbrType.STRING, value });
    else wf(name, DbrType.DOUBLE, value);
  }

  // The large array (every element of update k equals k, wrapped to the type) and its gap and put PVs.
  const t = o.arrayType;
  const atLeast2 = (n: number) => Math.max(n, 2);
  if (o.arrayElements > 0) {
    const array = wf(`${P}ARRAY`, t.ca, new t.of(0), {}, { maxCount: atLeast2(o.arrayElements), pvaElement: t.pva });
    const arraySkip = pv(`${P}ARRAY:SKIP`, { type: DbrType.LONG, value: 0, className: 'longout' });
    const put = wf(`${P}ARRAY:PUT`, t.ca, new t.of(0), {}, { maxCount: o.arrayElements, pvaElement: t.pva });
    const check = putChecker(o, stats);
    put.onPut = (p) => {
      check(p.value);
      return { accept: true };
    };
    // A new array per update (clients still sending the last one keep theirs), one asked for at a
    // time: at 'max' the next as soon as one is posted, else at the rate (a tick while one is
    // being made is let go, as a late C IOC's would be).
    const filler = new Worker(FILLER, { eval: true, workerData: { type: t.of.name, elements: o.arrayElements } });
    filler.unref();
    let k = 0;
    let making = false;
    const ask = (): void => {
      if (making) return;
      making = true;
      const skip = Number(arraySkip.state.value);
      k += 1 + Math.max(0, skip);
      if (skip > 0) arraySkip.post(0);
      filler.postMessage(k);
    };
    let first: () => void = () => {};
    filler.on('message', (buffer: ArrayBuffer) => {
      making = false;
      array.post(new t.of(buffer));
      stats.arrayUpdates++;
      stats.arrayTime = Date.now() / 1000;
      first();
      if (o.arrayRate === 'max') ask();
    });
    if (o.arrayRate === 'max') ask();
    else if (o.arrayRate > 0) every(() => o.arrayRate as number, ask);
    // Ready once the first update is out, as the C IOC's updater has published before it is.
    if (o.arrayRate === 'max' || o.arrayRate > 0) await new Promise<void>((resolve) => (first = resolve));
    first = () => {};
  }
  if (o.latencyElements > 0) {
    const n = atLeast2(o.latencyElements);
    // Never written before the workload's first put: UDF, INVALID, no time.
    for (const p of [
      wf(`${P}LATENCY:DOUBLE`, DbrType.DOUBLE, new Float64Array(0), {}, { maxCount: n }),
      wf(`${P}LATENCY:CHAR`, DbrType.CHAR, new Uint8Array(0), {}, { maxCount: n }),
    ])
      p.post(p.state.value, { severity: INVALID, status: UDF, timestamp: NEVER });
  }

  const last = counters[counters.length - 1]!;
  const stop = (): never => process.exit(0);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (o.watchStdin) {
    let buf = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line === 'reset-puts') stats.resetPuts();
        if (line === 'stats' || line === 'reset-puts')
          process.stdout.write(stats.answer(Number(last.state.value), Number(ramp.state.value)));
      }
    });
    process.stdin.on('end', stop);
  }
  let lines = '';
  for (const [k, v] of Object.entries(clientEnv)) lines += `${k}=${v}\n`;
  process.stdout.write(`${lines}ready\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
