// The framer: every message split at every offset, extended headers, direct reads into the
// final payload buffer, and the payload limit reported as an error (never a throw).
import { describe, expect, it } from 'vitest';
import { Framer, DIRECT_READ_THRESHOLD } from '../../src/ca/framer.js';
import { encodeDbr, emptyHeader, encode, type Header, ByteWriter, encodeMessage, decodeResponse, decodeDbr } from '../../src/ca/index.js';
import { VECTORS } from '../helpers/ca-vectors.js';

const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

interface Got {
  header: Header;
  payload: string;
  owned: boolean;
}

function collect(maxPayload?: number): { framer: Framer; got: Got[]; errors: string[] } {
  const got: Got[] = [];
  const errors: string[] = [];
  const framer = new Framer(
    (h, p, owned) => got.push({ header: { ...h }, payload: hex(p), owned }),
    (r) => errors.push(r),
    maxPayload,
  );
  return { framer, got, errors };
}

describe('framer', () => {
  const all = Object.values(VECTORS).map(bytes);
  const stream = new Uint8Array(all.reduce((n, b) => n + b.length, 0));
  let o = 0;
  for (const b of all) {
    stream.set(b, o);
    o += b.length;
  }

  it('delivers each reference message whole when pushed in one chunk', () => {
    const { framer, got, errors } = collect();
    framer.push(stream);
    expect(errors).toEqual([]);
    expect(got.length).toBe(all.length);
    got.forEach((g, i) => expect(hex(all[i]!).endsWith(g.payload)).toBe(true));
  });

  it.each(Object.entries(VECTORS))('%s split at every offset gives the same message', (_n, h) => {
    const msg = bytes(h);
    const { framer: ref, got: want } = collect();
    ref.push(msg);
    for (let cut = 0; cut <= msg.length; cut++) {
      const { framer, got, errors } = collect();
      framer.push(msg.slice(0, cut));
      framer.push(msg.slice(cut));
      expect(errors).toEqual([]);
      expect(got.map((g) => [g.header, g.payload])).toEqual(want.map((g) => [g.header, g.payload]));
    }
  });

  it('an InPlaceHandler sees each whole message where it lies; what it declines, and what spans reads, comes as a view', () => {
    // Every message the in-place handler saw (taking odd-numbered ones), and every one delivered as a view.
    const seen: string[] = [];
    const viewed: string[] = [];
    let n = 0;
    const framer = new Framer(
      (_h, p) => viewed.push(hex(p)),
      () => {},
      undefined,
      undefined,
      {
        inPlace: (h, chunk, offset) => {
          seen.push(hex(chunk.subarray(offset, offset + h.payloadSize)));
          return n++ % 2 === 1;
        },
      },
    );
    const withPayload = all.filter((b) => b.length > 16 && b.length < 2000);
    const joined = Buffer.concat(withPayload);
    framer.push(new Uint8Array(joined.subarray(0, joined.length - 5)));
    framer.push(new Uint8Array(joined.subarray(joined.length - 5)));
    const payloads = withPayload.map((b) => hex(b).slice(hex(b).length - 2 * (b.length - 16)));
    const last = payloads.length - 1;
    // The last message spans the two reads: never offered in place.
    expect(seen).toEqual(payloads.slice(0, last));
    expect(viewed).toEqual([...payloads.slice(0, last).filter((_, i) => i % 2 === 0), payloads[last]]);
  });

  it('decodeDbr at an offset of a larger buffer reads what it reads alone, for every form of a double and a string', () => {
    const extras = {
      status: 3,
      severity: 2,
      secondsPastEpoch: 1_000_000_000,
      nanoseconds: 123_456_789,
      metadata: { units: 'mm', precision: 3 },
    };
    for (const type of [6, 13, 20, 27, 34, 0, 14]) {
      const { payload, count } = encodeDbr(type, type % 7 === 0 ? 'abc' : 2.5, extras);
      const big = new Uint8Array(payload.length + 20).fill(0xee);
      big.set(payload, 7);
      expect(decodeDbr(type, count, big, 0, undefined, 7, payload.length)).toEqual(decodeDbr(type, count, payload));
      // Too short for its type at that offset: undefined, as alone.
      expect(decodeDbr(type, count, big, 0, undefined, 7, 3)).toBeUndefined();
    }
  });

  it('the whole stream pushed one byte at a time and in 7-byte chunks', () => {
    for (const step of [1, 7, 13]) {
      const { framer, got } = collect();
      for (let i = 0; i < stream.length; i += step) framer.push(stream.slice(i, i + step));
      expect(got.length).toBe(all.length);
    }
  });

  it('extended header for a payload of 64 KB or more, split at every offset around the header', () => {
    const values = new Float64Array(10000).map((_, i) => i * 0.5);
    const { payload, count } = encodeDbr(6, values);
    const m = encode({ type: 'EventAddResponse', dataType: 6, count, status: 1, subscriptionId: 3, payload });
    expect(m.length).toBe(24 + 80000);
    expect(hex(m.subarray(0, 4))).toBe('0001ffff');
    for (let cut = 0; cut < 40; cut++) {
      const { framer, got } = collect();
      framer.push(m.slice(0, cut));
      framer.push(m.slice(cut));
      expect(got.length).toBe(1);
      expect(got[0]!.header).toMatchObject({ command: 1, payloadSize: 80000, dataCount: 10000, param2: 3 });
    }
  });

  it('reads a large payload directly into its own buffer and hands it over owned', () => {
    const n = 100_000;
    const { payload, count } = encodeDbr(6, new Float64Array(n).fill(7));
    const m = encode({ type: 'ReadNotifyResponse', dataType: 6, count, status: 1, ioid: 1, payload });
    const { framer, got } = collect();
    let delivered: Uint8Array | undefined;
    const f2 = new Framer(
      (h, p, owned) => {
        if (owned) delivered = p;
        got.push({ header: { ...h }, payload: '', owned });
      },
      () => {},
    );
    framer.push(m.subarray(0, 1000));
    f2.push(m.subarray(0, 1000));
    let pos = 1000;
    while (pos < m.length) {
      const t = f2.directTarget();
      if (t) {
        expect(t.length).toBeGreaterThanOrEqual(DIRECT_READ_THRESHOLD);
        const k = Math.min(t.length, 65536, m.length - pos);
        t.set(m.subarray(pos, pos + k));
        f2.commitDirect(k);
        pos += k;
      } else {
        f2.push(m.subarray(pos, pos + 1000));
        pos += 1000;
      }
    }
    expect(delivered?.length).toBe(n * 8);
    expect(delivered?.byteOffset).toBe(0);
    const r = decodeDbr(6, n, delivered!, { owned: true })!;
    expect((r.value as Float64Array).every((v) => v === 7)).toBe(true);
    expect((r.value as Float64Array).buffer).toBe(delivered!.buffer); // zero-copy view
  });

  it('swapArrays: a large array reply is converted to host order as it arrives, wherever the reads split it', () => {
    // TIME_DOUBLE (value at offset 16), TIME_SHORT (offset 14), TIME_LONG (12), TIME_FLOAT (12).
    const cases: Array<[number, ArrayLike<number>]> = [
      [20, Float64Array.from({ length: 20_000 }, (_, i) => i * 1.5 - 7)],
      [15, Int16Array.from({ length: 50_000 }, (_, i) => (i % 65536) - 32768)],
      [19, Int32Array.from({ length: 30_000 }, (_, i) => i * 1000 - 5)],
      [16, Float32Array.from({ length: 30_000 }, (_, i) => i / 4)],
    ];
    for (const [type, values] of cases) {
      const { payload, count } = encodeDbr(type, values as never);
      payload.set([0, 2, 0, 1, 0x30, 0, 0, 1, 0, 0, 0, 9], 0); // status 2, severity 1, secs, nsec
      const m = encode({ type: 'EventAddResponse', dataType: type, count, status: 1, subscriptionId: 3, payload });
      for (const step of [1000, 4093, 65536 + 3]) {
        let delivered: [Uint8Array, boolean, boolean] | undefined;
        const f = new Framer(
          (_h, p, owned, hostOrder) => (delivered = [p, owned, hostOrder]),
          () => {},
          undefined,
          undefined,
          { swapArrays: true },
        );
        let pos = 0;
        while (pos < m.length) {
          const t = f.directTarget();
          if (t) {
            const k = Math.min(t.length, step + 5, m.length - pos); // odd sizes: reads end mid-element
            t.set(m.subarray(pos, pos + k));
            f.commitDirect(k);
            pos += k;
          } else {
            f.push(m.subarray(pos, pos + step));
            pos += step;
          }
        }
        expect(delivered?.[1]).toBe(true);
        expect(delivered?.[2]).toBe(true);
        const r = decodeDbr(type, count, delivered![0], { owned: true, hostOrder: true })!;
        expect(Array.from(r.value as ArrayLike<number>)).toEqual(Array.from(values));
        expect([r.status, r.severity, r.secondsPastEpoch, r.nanoseconds]).toEqual([2, 1, 0x30000001, 9]);
      }
    }
  });

  it('swapArrays leaves strings, chars, errors and payloads that arrive whole in network order', () => {
    const strings = encodeDbr(
      14,
      Array.from({ length: 3000 }, (_, i) => `s${i}`),
    );
    const chars = encodeDbr(18, new Uint8Array(200_000).fill(65));
    const small = encodeDbr(20, new Float64Array([1, 2, 3]));
    for (const [type, enc] of [
      [14, strings],
      [18, chars],
      [20, small],
    ] as const) {
      const m = encode({ type: 'ReadNotifyResponse', dataType: type, count: enc.count, status: 1, ioid: 1, payload: enc.payload });
      const got: boolean[] = [];
      let last: Uint8Array | undefined;
      const f = new Framer(
        (_h, p, _o, hostOrder) => {
          got.push(hostOrder);
          last = p.slice();
        },
        () => {},
        undefined,
        undefined,
        { swapArrays: true },
      );
      for (let i = 0; i < m.length; i += 7000) f.push(m.subarray(i, i + 7000));
      expect(got).toEqual([false]);
      expect(Buffer.compare(last!, enc.payload.subarray(0, last!.length))).toBe(0);
    }
  });

  it('a payload over the limit is a protocol error, and later input is ignored', () => {
    const { framer, got, errors } = collect(1024);
    const w = new ByteWriter();
    encodeMessage(w, { type: 'ReadNotifyResponse', dataType: 4, count: 2000, status: 1, ioid: 1, payload: new Uint8Array(2000) });
    framer.push(w.take());
    framer.push(encode({ type: 'EchoResponse' }));
    expect(got).toEqual([]);
    expect(errors.length).toBe(1);
    expect(errors[0]).toMatch(/exceeds the limit/);
    expect(framer.hasFailed).toBe(true);
  });

  it('an absurd extended payload size is refused before any allocation', () => {
    const { framer, errors } = collect(16384);
    framer.push(bytes('000fffff000600000000000100000001fffffff000000001'));
    expect(errors[0]).toMatch(/4294967280 bytes/);
  });

  it('decodeResponse of a zero-length EVENT_ADD is the cancel confirmation shape', () => {
    const h = { ...emptyHeader(), command: 1, dataType: 6, dataCount: 1, param1: 1, param2: 9 };
    expect(decodeResponse(h, new Uint8Array(0))).toMatchObject({ type: 'EventAddResponse', subscriptionId: 9 });
  });
});
