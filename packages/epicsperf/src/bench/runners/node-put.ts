// The put-driven workloads as this project's Node client runs them: array-put (arrays put as fast
// as the client can, with or without completion) and latency (put an array, wait for its own
// monitor update, per size). Samples in the runner layout (docs/runners.md).
import type { Context, MonitorEvent, Monitor } from 'epics-client';
import { SampleStore } from '../samples.js';
import { monoSeconds, nowSeconds } from '../../runner/protocol.js';
import type { RunnerArgs } from './args.js';
import { putValue } from './put-values.js';

type Events = (event: Record<string, unknown>) => void;

/** array-put: arrays of `elements`, every element of put k equal to k (as the IOC expects). */
export async function arrayPut(ctx: Context, args: RunnerArgs, events: Events): Promise<SampleStore> {
  const store = new SampleStore(1, args.samples);
  const name = args.names[0]!;
  const wait = args.flags['no-callback'] !== true;
  const buf = new Float64Array(args.elements);
  await ctx.get(name, { count: 1 });
  events({ ev: 'connected', count: 1 });
  for (let k = 1; k <= args.samples; k++) {
    buf.fill(putValue(k, args.type, 'CA'));
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
export async function latency(ctx: Context, args: RunnerArgs, events: Events): Promise<{ store: SampleStore; monitor: Monitor }> {
  const sizes = args.sizes;
  const store = new SampleStore(sizes.length, args.samples);
  const name = args.names[0]!;
  let waiting: { value: number; size: number; resolve: (e: MonitorEvent & { kind: 'update' }) => void } | undefined;
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
      const got = new Promise<MonitorEvent & { kind: 'update' }>((resolve) => (waiting = { value, size, resolve }));
      const t0 = monoSeconds();
      await ctx.put(name, buf, { wait: false });
      const e = await got;
      const t1 = monoSeconds();
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
