// The put-driven tasks as this project's Node client runs them, over CA (`node`) or PV Access
// (`node-pva`): array-put (arrays put as fast as the client can, with or without completion; over
// PV Access with only) and latency (put an array, wait for its own monitor update, per size).
// Samples in the runner layout (docs/runners.md).
import type { Context, MonitorEvent, Monitor, PvaReading, TimeReading } from 'epics-client';
import { SampleStore } from '../bench/samples.js';
import { monoSeconds, nowSeconds } from '../clock.js';
import type { RunnerArgs } from './args.js';
import { putValue } from './put-values.js';

type Events = (event: Record<string, unknown>) => void;
type AnyContext = Context<'ca' | 'pva'>;
type Update = MonitorEvent<TimeReading | PvaReading> & { kind: 'update' };

/** array-put: arrays of `elements`, every element of put k equal to k (as the IOC expects). */
export async function arrayPut(ctx: AnyContext, args: RunnerArgs, events: Events): Promise<SampleStore> {
  const pva = ctx.protocol === 'pva';
  const store = new SampleStore(1, args.samples);
  const name = args.names[0]!;
  const wait = args.flags['no-callback'] !== true;
  // As c-pvxs and p4p: a PV Access put always has a reply, so a run without completion is not one.
  if (pva && !wait) throw new Error('PV Access has no put without a reply (epics-client)');
  const buf = new Float64Array(args.elements);
  await ctx.get(name, pva ? {} : { count: 1 });
  events({ ev: 'connected', count: 1 });
  for (let k = 1; k <= args.samples; k++) {
    buf.fill(putValue(k, args.type, pva ? 'PVA' : 'CA'));
    const t0 = nowSeconds();
    let status = 0;
    try {
      await ctx.put(name, buf, { wait, timeout: 60_000 });
    } catch {
      status = 1;
    }
    store.add(0, 0, status, k, t0, nowSeconds());
  }
  events({ ev: 'complete', elements: args.elements });
  return store;
}

/**
 * latency: for each size, put an array of that size filled with a fresh value and wait for the
 * client's own monitor update carrying it. Per round one sample: pv = size index, value = round
 * trip (s, from before the put to the callback), IOC time = the update's timestamp, receive time.
 */
export async function latency(
  ctx: AnyContext,
  args: RunnerArgs,
  events: Events,
): Promise<{ store: SampleStore; monitor: Monitor<TimeReading | PvaReading> }> {
  const pva = ctx.protocol === 'pva';
  const sizes = args.sizes;
  const store = new SampleStore(sizes.length, args.samples);
  const name = args.names[0]!;
  let waiting: { value: number; size: number; resolve: (e: Update) => void } | undefined;
  let first: (() => void) | undefined;
  const firstUpdate = new Promise<void>((resolve) => (first = resolve));
  const monitor = ctx.monitor(name, {}, (e) => {
    if (e.kind !== 'update') return;
    first?.();
    const w = waiting;
    if (!w) return;
    const v = e.value as ArrayLike<number> | number;
    const a = typeof v === 'number' ? [v] : v;
    if (a[0] === w.value) {
      waiting = undefined;
      w.resolve(e);
    }
  });
  await firstUpdate;
  events({ ev: 'connected', count: 1 });
  let counter = 0;
  for (let i = 0; i < sizes.length; i++) {
    const size = sizes[i]!;
    // Bytes for the byte-array case, as an application holding bytes would put them.
    const buf = args.type === 'char' ? new Uint8Array(size) : new Float64Array(size);
    for (let round = -WARMUP; round < args.samples; round++) {
      const value = (counter++ % 250) + 1;
      buf.fill(value);
      const got = new Promise<Update>((resolve) => (waiting = { value, size, resolve }));
      const t0 = monoSeconds();
      // CA: a plain WRITE. PV Access: a put (which always has a reply) whose reply may come
      // before or after the update; the round trip ends at the update, and the put is settled
      // before the next one.
      const put = ctx.put(name, buf, { wait: pva });
      const e = await Promise.race([got, put.then(() => got)]);
      const t1 = monoSeconds();
      await put;
      const recv = nowSeconds();
      if (round < 0) continue;
      const v = e.value as ArrayLike<number> | number;
      const len = typeof v === 'number' ? 1 : v.length;
      store.add(i, e.severity, len === size ? 0 : 4, t1 - t0, e.posixSeconds, recv);
    }
  }
  events({ ev: 'complete' });
  return { store, monitor };
}

/** Rounds per size that are not kept (connection and code paths warm up). */
export const WARMUP = 3;
