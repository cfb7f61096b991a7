// Large PV Access arrays against the built-in IOC: a 300,000-element int64 waveform monitored
// over several updates; every update holds its own values (none is overwritten by a later one),
// and every array is a view of its message's own buffer (read straight from the socket, no copy
// into the typed array; the first, before the client has learnt the layout, moved within it); with reuseArrays each
// update is read into the memory of the one before (it replaces that array), and every update is
// whole during its callback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import type { Context, MonitorEvent, PvaReading } from '../../src/index.js';
import { pvaContextFor } from '../helpers/pva-helpers.js';

let ioc: Ioc;
let ctx: Context<'pva'>;
const N = 300_000;

beforeAll(async () => {
  ioc = await startIoc({ records: 1, rate: 0, arrayElements: N, arrayRate: 5, arrayType: 'int64' });
  ctx = pvaContextFor(ioc.env);
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

describe('large arrays over PV Access', () => {
  it('every update keeps its own values; each is a view of its message', async () => {
    const kept: BigInt64Array[] = [];
    const firsts: bigint[] = [];
    const m = ctx.monitor('TEST:ARRAY', { timeout: 20_000 });
    for await (const ev of m as AsyncIterable<MonitorEvent<PvaReading>>) {
      if (ev.kind === 'error') throw ev.error;
      if (ev.kind !== 'update') continue;
      const v = ev.value as BigInt64Array;
      expect(v).toBeInstanceOf(BigInt64Array);
      expect(v.length).toBe(N);
      kept.push(v);
      firsts.push(v[0]!);
      if (kept.length === 5) break;
    }
    // Each update holds one value in every element, and still does after the later updates came.
    for (const [i, v] of kept.entries()) {
      expect(v[0]).toBe(firsts[i]);
      expect(v[N >> 1]).toBe(firsts[i]);
      expect(v[N - 1]).toBe(firsts[i]);
    }
    expect(new Set(firsts).size).toBeGreaterThan(1);
    // Every update is a view of a larger buffer (the whole message), not a copy.
    expect(kept.every((v) => v.buffer.byteLength > v.byteLength)).toBe(true);
  }, 60_000);

  it('reuseArrays: each update is read into the memory of the one before, each whole during its callback', async () => {
    const buffers: ArrayBufferLike[] = [];
    const firsts: bigint[] = [];
    let torn = 0;
    await new Promise<void>((resolve, reject) => {
      const m = ctx.monitor('TEST:ARRAY', { timeout: 20_000, reuseArrays: true }, (ev: MonitorEvent<PvaReading>) => {
        if (ev.kind === 'error') return reject(ev.error);
        if (ev.kind !== 'update') return;
        const v = ev.value as BigInt64Array;
        const first = v[0]!;
        for (let i = 0; i < v.length; i++) if (v[i] !== first) torn++;
        firsts.push(first);
        buffers.push(v.buffer);
        if (firsts.length === 10) {
          m.close();
          resolve();
        }
      });
    });
    expect(torn).toBe(0);
    // the updates step forward (the IOC may skip some for a slow client, never go back)
    for (let i = 1; i < firsts.length; i++) expect(firsts[i]! > firsts[i - 1]!).toBe(true);
    // each update replaces the array, so each is read into the memory of the one before: one piece
    // of memory for them all
    expect(new Set(buffers).size).toBe(1);
  }, 60_000);
});
