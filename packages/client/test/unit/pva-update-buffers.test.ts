// A reuseArrays monitor's next large update read into the memory of its last one: which message
// may take an offered buffer (a monitor update of that request whose changed bitset replaces every
// array viewing it), the bit paths of the arrays a value views, the framer handing the allocator
// the message's first bytes, and a monitor against a fake server whose updates change some of its
// fields: every update whole, in two buffers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Context, type MonitorEvent, type PvaReading } from '../../src/index.js';
import { BitSet, Cmd, encodeMessages, scalar, scalarArray, structure, union, type Message } from '../../src/pva/index.js';
import { Framer } from '../../src/pva/framer.js';
import { largeViews, UpdateBuffers } from '../../src/pva/update-buffers.js';
import { FakePvaServer, UPDATES, UPDATES_ELEMENTS } from '../helpers/pva-fake-server.js';

const TYPE = structure('epics:nt/NTScalarArray:1.0', {
  value: scalarArray('double'),
  alarm: structure('alarm_t', { severity: scalar('int') }),
});

/** The first 64 bytes of a monitor update of request `id` with changed bits `bits` and subcommand `sub`. */
function prefix(id: number, bits: number[], sub = 0, command: number = Cmd.MONITOR): Uint8Array {
  const m: Message = {
    type: 'MonitorUpdate',
    requestId: id,
    subcommand: sub,
    changed: new BitSet(bits),
    valueType: TYPE,
    value: { value: new Float64Array(100), alarm: { severity: 1 } },
  };
  const b = encodeMessages([m]);
  b[3] = command;
  return b.subarray(0, 64);
}

describe('update buffers: which message takes an offered buffer', () => {
  it('a monitor update of the request that replaces every array there, once', () => {
    const u = new UpdateBuffers();
    const buf = new ArrayBuffer(1000);
    u.offer(7, new Map([[buf, [[0, 1]]]]));
    expect(u.take(500, prefix(8, [1]))).toBeUndefined(); // another request
    expect(u.take(500, prefix(7, [3]))).toBeUndefined(); // the alarm only: the array is still the update's base
    expect(u.take(500, prefix(7, [1]).subarray(0, 12))).toBeUndefined(); // its request id not all there
    expect(u.take(500, prefix(7, [1], 0x10))).toBeUndefined(); // the monitor's end
    expect(u.take(500, prefix(7, [1], 0, Cmd.GET))).toBeUndefined();
    expect(u.take(1001, prefix(7, [1]))).toBeUndefined(); // too small
    expect(u.take(500, prefix(7, [1]))).toBe(buf);
    expect(u.take(500, prefix(7, [1]))).toBeUndefined(); // used up
    u.offer(7, new Map([[buf, [[0, 1]]]]));
    expect(u.take(1000, prefix(7, [0]))).toBe(buf); // the whole structure
    u.offer(
      7,
      new Map([
        [
          buf,
          [
            [0, 1],
            [0, 4, 5],
          ],
        ],
      ]),
    );
    expect(u.take(1000, prefix(7, [1]))).toBeUndefined(); // the second array not replaced
    expect(u.take(1000, prefix(7, [1, 4]))).toBe(buf);
    // Two buffers: the one whose arrays the update replaces.
    const other = new ArrayBuffer(1000);
    u.offer(
      7,
      new Map([
        [buf, [[0, 4]]],
        [other, [[0, 1]]],
      ]),
    );
    expect(u.take(1000, prefix(7, [1]))).toBe(other);
    u.offer(7, new Map([[buf, [[0, 1]]]]));
    u.withdraw(7);
    expect(u.take(1000, prefix(7, [1]))).toBeUndefined();
    expect(u.size).toBe(0);
  });

  it("the bit paths of a value's large arrays: through structures, into unions", () => {
    const t = structure('', {
      small: scalarArray('double'),
      value: scalarArray('double'),
      inner: structure('', { a: scalar('int'), arr: scalarArray('long') }),
      u: union('', { d: scalarArray('double'), s: scalar('string') }),
    });
    const big = new ArrayBuffer(4096);
    const other = new ArrayBuffer(4096);
    const v = {
      small: new Float64Array(4),
      value: new Float64Array(big, 0, 100),
      inner: { a: 1, arr: new BigInt64Array(big, 800, 10) },
      u: { field: 'd', value: new Float64Array(other, 8, 10) },
    };
    const views = largeViews(v, t, 1024);
    expect([...views.keys()]).toEqual([big, other]);
    // small 1, value 2, inner 3 (a 4, arr 5), u 6
    expect(views.get(big)).toEqual([
      [0, 2],
      [0, 3, 5],
    ]);
    expect(views.get(other)).toEqual([[0, 6]]);
  });

  it('the framer asks for a large buffer with the message header and at least 64 bytes of its payload in hand', () => {
    const payload = new Uint8Array(100_000).map((_, i) => i);
    const m = new Uint8Array(8 + payload.length);
    m.set([0xca, 2, 0x40, 13]);
    new DataView(m.buffer).setUint32(4, payload.length, true);
    m.set(payload, 8);
    const asked: Uint8Array[] = [];
    const got: Uint8Array[] = [];
    const framer = new Framer(
      (_h, p) => got.push(p.slice()),
      () => {},
      undefined,
      (n, pre) => {
        asked.push(pre.slice());
        return new ArrayBuffer(n);
      },
    );
    framer.push(m.subarray(0, 20));
    expect(asked).toEqual([]);
    framer.push(m.subarray(20, 70));
    expect(asked.length).toBe(1);
    expect(Array.from(asked[0]!)).toEqual(Array.from(m.subarray(0, 70)));
    framer.push(m.subarray(70));
    expect(got.length).toBe(1);
    expect(Buffer.compare(got[0]!, payload)).toBe(0);
  });
});

describe('a reuseArrays monitor reads each update into the memory of the last', () => {
  const server = new FakePvaServer();
  let ctx: Context<'pva'>;

  beforeAll(async () => {
    await server.listen();
    ctx = new Context({
      env: { EPICS_PVA_ADDR_LIST: '', EPICS_PVA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_NAME_SERVERS: `127.0.0.1:${server.port}` },
      protocol: 'pva',
    });
  });

  afterAll(async () => {
    await ctx?.close();
    await server.close();
  });

  it('every update whole during its callback, the arrays an update left unchanged intact, in at most two buffers', async () => {
    const seen: { v: number; o: number; severity: number; buffers: ArrayBufferLike[] }[] = [];
    /** The one number every element of `a` holds, or NaN. */
    const one = (a: Float64Array): number => {
      if (a.length !== UPDATES_ELEMENTS) return NaN;
      for (let i = 0; i < a.length; i += 997) if (a[i] !== a[0]) return NaN;
      return a[a.length - 1] === a[0] ? a[0]! : NaN;
    };
    await new Promise<void>((resolve, reject) => {
      const m = ctx.monitor('FAKE:good:updates', { timeout: 5000, reuseArrays: true }, (ev: MonitorEvent<PvaReading>) => {
        if (ev.kind === 'error') return reject(ev.error);
        if (ev.kind !== 'update') return;
        const value = ev.value as Float64Array;
        const other = ev.raw.other as Float64Array;
        seen.push({ v: one(value), o: one(other), severity: ev.severity, buffers: [value.buffer, other.buffer] });
        if (seen.length === UPDATES.length) {
          m.close();
          resolve();
        }
      });
    });
    expect(seen.map(({ v, o }) => ({ v, o }))).toEqual(UPDATES.map(({ v, o }) => ({ v, o })));
    expect(seen.map((s) => s.severity)).toEqual([0, 1, 1, 3, 3, 3, 6, 7, 8, 8]);
    // Update 3 (the other array only) is read into the first update's memory, which its value no
    // longer views; update 2 (the value only) could not be: the other array was still there.
    expect(seen[2]!.buffers[1]).toBe(seen[0]!.buffers[1]);
    expect(seen[1]!.buffers[0]).not.toBe(seen[0]!.buffers[0]);
    expect(new Set(seen.flatMap((s) => s.buffers)).size).toBe(2);
  });
});
