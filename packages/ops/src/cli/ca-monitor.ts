// `ca monitor`, as camonitor: one line per update (name, timestamp, value, alarm),
// timestamps from the server or the client, absolute, relative or incremental; until Ctrl-C.
import { DBE_ALARM, DBE_LOG, DBE_PROPERTY, DBE_VALUE } from 'epics-client/ca';
import { NotFoundError, TimeoutError, type Context, type ChannelInfo, type Monitor, type TimeReading } from 'epics-client';
import { type CommonFlags, readOptionsFor, styleOf, UsageError } from './ca-common.js';
import { nameColumn, timeText, wideTail } from './ca-format.js';

export interface MonitorFlags extends CommonFlags {
  m: string;
  t: string;
  updates?: number;
}

const MASK_BITS: Record<string, number> = { v: DBE_VALUE, a: DBE_ALARM, l: DBE_LOG, p: DBE_PROPERTY };
/** The longest wait a timer allows: a name not found at first is searched for until Ctrl-C. */
const FOREVER_MS = 2 ** 31 - 1;

/** -t: where timestamps come from and how they are shown. */
interface Stamps {
  server: boolean;
  client: boolean;
  kind: 'absolute' | 'relative' | 'incremental' | 'byChannel';
}

function parseStamps(key: string): Stamps {
  if (!/^[scnriI]+$/.test(key)) throw new UsageError(`-t ${key}: the key is made of s, c, n, r, i and I`);
  const kind = key.includes('I') ? 'byChannel' : key.includes('i') ? 'incremental' : key.includes('r') ? 'relative' : 'absolute';
  return { server: key.includes('s'), client: key.includes('c'), kind };
}

function parseMask(m: string): number {
  if (!/^[valp]+$/.test(m)) throw new UsageError(`-m ${m}: the mask is made of v, a, l and p`);
  let mask = 0;
  for (const c of m) mask |= MASK_BITS[c]!;
  return mask;
}

/** `%+12.6f`. */
const signed = (x: number): string => `${x < 0 ? '-' : '+'}${Math.abs(x).toFixed(6)}`.padStart(12);

interface PvState {
  printed: boolean;
  prevServer: number;
  prevClient: number;
}

/** Prints the timestamp part of camonitor's lines, keeping the references that -t r/i/I need. */
class StampPrinter {
  private firstServer: number | undefined;
  private readonly startClient = Date.now() / 1000;
  private prevServer = 0;
  private prevClient = 0;

  constructor(private readonly s: Stamps) {}

  text(r: TimeReading, pv: PvState): string {
    const s = this.s;
    const nowServer = r.posixSeconds;
    const nowClient = Date.now() / 1000;
    this.firstServer ??= nowServer;
    let refServer = 0;
    let refClient = 0;
    let absolute = !pv.printed;
    if (s.kind === 'relative') [refServer, refClient] = [this.firstServer, this.startClient];
    else if (s.kind === 'incremental') [refServer, refClient] = [this.prevServer, this.prevClient];
    else if (s.kind === 'byChannel') [refServer, refClient] = [pv.prevServer, pv.prevClient];
    else absolute = true;
    let out = '';
    if (absolute) {
      if (s.server) out += timeText(r.timestamp, r.nanoseconds);
      if (s.client) out += `(${timeText(new Date(nowClient * 1000))})`;
      pv.printed = true;
    } else {
      if (s.server) out += `${' '.repeat(14)}${signed(nowServer - refServer)}`;
      if (s.client) out += `${' '.repeat(14)}(${signed(nowClient - refClient)})`;
    }
    pv.prevServer = this.prevServer = nowServer;
    pv.prevClient = this.prevClient = nowClient;
    return out;
  }
}

/** Subscribe to every name and print updates until Ctrl-C (or --updates of them). */
export async function runMonitor(ctx: Context, names: string[], o: MonitorFlags): Promise<number> {
  const mask = parseMask(o.m);
  const stamps = new StampPrinter(parseStamps(o.t));
  const monitors: Monitor[] = [];
  let updates = 0;
  let finish!: () => void;
  const done = new Promise<void>((res) => (finish = res));
  const onSignal = (): void => finish();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const subscribe = (name: string, info: ChannelInfo): void => {
    const pv: PvState = { printed: false, prevServer: 0, prevClient: 0 };
    let lastCount = info.elementCount;
    const line = (text: string, count = lastCount): void => {
      process.stdout.write(`${nameColumn(name, count, styleOf(o, o['#'] !== undefined || count > 1))}${text}\n`);
    };
    const m = ctx.monitor(name, { ...readOptionsFor(info, o, 'time'), form: 'time', mask }, (ev) => {
      if (ev.kind === 'update') {
        lastCount = ev.count;
        const style = styleOf(o, o['#'] !== undefined || ev.count > 1);
        line(wideTail(ev, stamps.text(ev, pv), style), ev.count);
        if (o.updates !== undefined && ++updates >= o.updates) finish();
      } else if (ev.kind === 'disconnected') line(`${timeText(new Date())} *** disconnected`);
      else if (ev.kind === 'error') line(`${timeText(new Date())} *** CA error ${ev.error.message}`);
    });
    monitors.push(m);
  };

  const timeout = o.w * 1000;
  const stop = new AbortController();
  const started = names.map(async (name) => {
    let info: ChannelInfo;
    try {
      info = await ctx.info(name, { timeout });
    } catch (e) {
      if (!(e instanceof NotFoundError || e instanceof TimeoutError)) throw e;
      process.stdout.write(`${name.padEnd(30)} *** Not connected (PV not found)\n`);
      info = await ctx.info(name, { timeout: FOREVER_MS, signal: stop.signal });
    }
    subscribe(name, info);
  });
  // A name that never connects keeps searching; only a hard error ends the command early.
  const failure = Promise.all(started).then(() => new Promise<never>(() => {}));
  failure.catch(() => {});
  try {
    await Promise.race([done, failure]);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    stop.abort();
    for (const m of monitors) m.close();
  }
  return 0;
}
