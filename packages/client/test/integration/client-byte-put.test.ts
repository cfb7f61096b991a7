// Byte arrays put to a CHAR waveform of the real IOC (the copy-once path of encodeDbr): every byte
// arrives as it was, from a Uint8Array, a Buffer, a view into a larger buffer and an Int8Array.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc, ensurePythonEnv } from 'epicsperf-testkit/ioc';
import { Context } from '../../src/client/context.js';

const N = 100_000;
let ioc: Ioc;
let ctx: Context;
let pv: string;

beforeAll(async () => {
  const python = await ensurePythonEnv();
  ioc = await startIoc({ records: 1, rate: 0, latencyElements: N, python });
  ctx = new Context({ env: { ...ioc.env, EPICS_CA_MAX_ARRAY_BYTES: String(2 * N) } });
  pv = ioc.prefix + 'LATENCY:CHAR';
});
afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

/** Bytes that differ from their neighbours (a shifted or repeated byte shows). */
function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 7 + seed + (i >> 8)) & 0xff;
  return b;
}

async function readBack(count: number): Promise<Uint8Array> {
  const r = await ctx.get(pv, { count });
  return Uint8Array.from(r.value as ArrayLike<number>);
}

describe('byte puts to a CHAR waveform', () => {
  it('a Uint8Array of 100,000 bytes (not a multiple of 8 long: 99,997) arrives intact', async () => {
    const bytes = pattern(99_997, 1);
    await ctx.put(pv, bytes);
    expect(Buffer.from(await readBack(bytes.length)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('a Buffer and a view into the middle of a larger buffer arrive intact', async () => {
    const buf = Buffer.from(pattern(N, 2));
    await ctx.put(pv, buf);
    expect(Buffer.from(await readBack(N)).equals(buf)).toBe(true);
    const big = pattern(N + 4096, 3);
    const view = big.subarray(1001, 1001 + 50_000);
    await ctx.put(pv, view);
    expect(Buffer.from(await readBack(view.length)).equals(Buffer.from(view))).toBe(true);
  });

  it("an Int8Array goes as its two's complement bytes", async () => {
    const signed = new Int8Array([-128, -1, 0, 1, 127, -2]);
    await ctx.put(pv, signed);
    expect([...(await readBack(signed.length))]).toEqual([128, 255, 0, 1, 127, 254]);
  });

  it("numbers out of a byte's range in a plain array are still refused", async () => {
    await expect(ctx.put(pv, [1, 256])).rejects.toThrow(/does not fit/);
  });
});
