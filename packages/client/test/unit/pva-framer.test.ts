// The framer: every captured message split at every offset, whole sessions in small chunks,
// segmented messages joined (with control messages between segments), errors reported not thrown.
import { describe, expect, it } from 'vitest';
import { decodeValue, encodeValue, Flags, Reader, scalarArray, Writer, type PvaHeader } from '../../src/pva/index.js';
import { Framer } from '../../src/pva/framer.js';
import { bytes, FIXTURES, hex, loadFixture } from '../helpers/pva-fixtures.js';

interface Got {
  header: PvaHeader;
  payload: string;
}

function collect(max?: number): { framer: Framer; got: Got[]; errors: string[] } {
  const got: Got[] = [];
  const errors: string[] = [];
  const framer = new Framer(
    (h, p) => got.push({ header: { ...h }, payload: hex(p) }),
    (r) => errors.push(r),
    max,
  );
  return { framer, got, errors };
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

/** A message with the given flags/command and payload, little-endian. */
function msg(flags: number, command: number, payload: Uint8Array): Uint8Array {
  const b = new Uint8Array(8 + payload.length);
  b.set([0xca, 2, flags, command]);
  new DataView(b.buffer).setUint32(4, flags & Flags.CONTROL ? 0 : payload.length, true);
  b.set(payload, 8);
  return b;
}

describe('pva framer', () => {
  const all = FIXTURES.flatMap((f) => loadFixture(f).map((m) => m.bytes));

  it('the in-place handler is offered each whole unsegmented message where it lies; what it declines, and segments, go to the handler', () => {
    const seen: string[] = [];
    const { got, errors } = collect();
    const framer = new Framer(
      (h, p) => got.push({ header: { ...h }, payload: hex(p) }),
      (r) => errors.push(r),
      undefined,
      undefined,
      (h, b, start, end) => {
        if (h.command !== 13) return false;
        expect(end - start).toBe(h.payloadSize);
        seen.push(hex(b.subarray(start, end)));
        return true;
      },
    );
    const p = (n: number, v: number) => new Uint8Array(n).fill(v);
    const stream = concat([
      msg(0x40, 13, p(5, 1)),
      msg(0x40, 10, p(3, 2)),
      msg(0x40, 13, p(6, 3)),
      msg(0x40 | Flags.SEGMENT_FIRST, 13, p(2, 4)),
      msg(0x40 | Flags.SEGMENT_LAST, 13, p(2, 5)),
    ]);
    // Whole in one chunk, then split in two at every offset (the split message comes whole from the framer's own buffer).
    for (let cut = 0; cut <= stream.length; cut += cut === 0 ? 1 : 7) {
      seen.length = 0;
      got.length = 0;
      framer.push(stream.subarray(0, cut));
      framer.push(stream.subarray(cut));
      expect(errors).toEqual([]);
      expect(seen).toEqual([hex(p(5, 1)), hex(p(6, 3))]);
      expect(got.map((g) => [g.header.command, g.payload])).toEqual([
        [10, hex(p(3, 2))],
        [13, hex(concat([p(2, 4), p(2, 5)]))],
      ]);
    }
  });

  it('every captured message split at every offset gives the same message', () => {
    for (const m of all) {
      const { framer: ref, got: want } = collect();
      ref.push(m);
      expect(want.length).toBe(1);
      for (let cut = 0; cut <= m.length; cut++) {
        const { framer, got, errors } = collect();
        framer.push(m.subarray(0, cut));
        framer.push(m.subarray(cut));
        expect(errors).toEqual([]);
        expect(got).toEqual(want);
        expect(framer.buffered).toBe(0);
      }
    }
  });

  it('a whole session one byte at a time and in odd chunks', () => {
    for (const f of FIXTURES) {
      const msgs = loadFixture(f).map((m) => m.bytes);
      const stream = concat(msgs);
      for (const step of [1, 3, 7, 100, stream.length]) {
        const { framer, got, errors } = collect();
        for (let i = 0; i < stream.length; i += step) framer.push(stream.slice(i, i + step));
        expect(errors).toEqual([]);
        expect(got.map((g) => g.payload)).toEqual(msgs.map((m) => hex(m.subarray(8, m[2]! & 1 ? 8 : undefined))));
      }
    }
  });

  it('big-endian sizes', () => {
    const { framer, got } = collect();
    framer.push(bytes('ca02c00400000003 aabbcc'));
    expect(got).toEqual([{ header: { version: 2, flags: 0xc0, command: 4, payloadSize: 3 }, payload: 'aabbcc' }]);
  });

  it('segmented messages are joined, control messages may come between, any split', () => {
    const first = msg(Flags.SERVER | Flags.SEGMENT_FIRST, 0x0a, bytes('0102'));
    const ctrl = msg(Flags.SERVER | Flags.CONTROL, 3, new Uint8Array(0));
    const middle = msg(Flags.SERVER | Flags.SEGMENT_MIDDLE, 0x0a, bytes('0304'));
    const last = msg(Flags.SERVER | Flags.SEGMENT_LAST, 0x0a, bytes('05'));
    const stream = concat([first, ctrl, middle, last]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const { framer, got, errors } = collect();
      framer.push(stream.subarray(0, cut));
      framer.push(stream.subarray(cut));
      expect(errors).toEqual([]);
      expect(got.map((g) => [g.header.command, g.header.flags, g.payload])).toEqual([
        [3, Flags.SERVER | Flags.CONTROL, ''],
        [0x0a, Flags.SERVER, '0102030405'],
      ]);
      expect(got[1]!.header.payloadSize).toBe(5);
    }
  });

  it('protocol errors are reported once and input after them is ignored', () => {
    const cases: [string, Uint8Array[], number?][] = [
      ['bad magic', [bytes('cb02000000000000')]],
      ['payload over the limit', [bytes('ca02000a00010000')], 100],
      ['middle without first', [msg(Flags.SEGMENT_MIDDLE, 1, bytes('00'))]],
      ['unsegmented inside segmented', [msg(Flags.SEGMENT_FIRST, 1, bytes('00')), msg(0, 1, bytes('00'))]],
      ['segment of another command', [msg(Flags.SEGMENT_FIRST, 1, bytes('00')), msg(Flags.SEGMENT_LAST, 2, bytes('00'))]],
      [
        'joined segments over the limit',
        [msg(Flags.SEGMENT_FIRST, 1, new Uint8Array(60)), msg(Flags.SEGMENT_LAST, 1, new Uint8Array(60))],
        100,
      ],
    ];
    for (const [name, chunks, max] of cases) {
      const { framer, got, errors } = collect(max);
      for (const c of chunks) expect(() => framer.push(c)).not.toThrow();
      expect(errors.length, name).toBe(1);
      expect(framer.hasFailed).toBe(true);
      framer.push(all[0]!);
      expect(got.length, name).toBe(0);
    }
  });
});

describe('pva framer: large messages read straight into their own buffer', () => {
  /** Feed `stream` as a socket would: into directTarget() when the framer offers one, else 64 KB chunks. */
  function feed(framer: Framer, stream: Uint8Array, firstChunk: number): number {
    let pos = 0;
    let direct = 0;
    while (pos < stream.length) {
      const t = framer.directTarget();
      if (t) {
        const n = Math.min(t.length, stream.length - pos, 99_000); // (the last read of the first large message is short)
        t.set(stream.subarray(pos, pos + n));
        framer.commitDirect(n);
        direct += n;
        pos += n;
      } else {
        const n = Math.min(pos === 0 ? firstChunk : 65536, stream.length - pos);
        framer.push(stream.slice(pos, pos + n));
        pos += n;
      }
    }
    return direct;
  }

  it('delivers a large message as owned, its bytes intact after later messages, and the small ones around it', () => {
    const big1 = new Uint8Array(300_000).map((_, i) => i * 7);
    const big2 = new Uint8Array(200_000).map((_, i) => i * 13);
    const small = new Uint8Array([1, 2, 3, 4, 5]);
    const stream = concat([msg(0, 13, small), msg(0, 13, big1), msg(0, 13, small), msg(0, 13, big2), msg(0, 13, small)]);
    const got: Array<{ payload: Uint8Array; owned: boolean }> = [];
    const errors: string[] = [];
    const framer = new Framer(
      (_h, p, owned) => got.push({ payload: owned ? p : p.slice(), owned: owned !== undefined }),
      (r) => errors.push(r),
    );
    const direct = feed(framer, stream, 1000);
    expect(errors).toEqual([]);
    expect(got.map((g) => g.payload.length)).toEqual([5, 300_000, 5, 200_000, 5]);
    expect(direct).toBeGreaterThan(400_000);
    expect(got[1]!.owned).toBe(true);
    expect(got[3]!.owned).toBe(true);
    // Owned payloads are never reused by the framer: both still hold their own bytes.
    expect(Buffer.compare(got[1]!.payload, big1)).toBe(0);
    expect(Buffer.compare(got[3]!.payload, big2)).toBe(0);
    expect(Array.from(got[4]!.payload)).toEqual([1, 2, 3, 4, 5]);
  });

  it('the same messages pushed in small chunks only (no direct reads) come out the same', () => {
    const big = new Uint8Array(150_000).map((_, i) => i * 3);
    const stream = concat([msg(0, 13, big), msg(0, 13, new Uint8Array([9]))]);
    const { framer, got, errors } = collect();
    for (let i = 0; i < stream.length; i += 1000) framer.push(stream.subarray(i, i + 1000));
    expect(errors).toEqual([]);
    expect(got.map((g) => g.payload.length / 2)).toEqual([150_000, 1]);
    expect(got[0]!.payload).toBe(hex(big));
  });

  it('a large int64 array in an owned payload is a view of it: moved onto the bytes before it while misaligned, in place once aligned', () => {
    const values = BigInt64Array.from({ length: 20_000 }, (_, i) => BigInt(i) * 1_000_003n - 5n);
    const w = new Writer(true);
    encodeValue(w, scalarArray('long'), values);
    const body = w.take();
    const hint = { shift: 0 };
    const decodeAt = (shift: number): { v: BigInt64Array; view: boolean; moved: boolean } => {
      // The payload as the framer lays it out: its message starts `shift` bytes into the buffer, after an 8-byte header.
      const buf = new Uint8Array(new ArrayBuffer(body.length + 16), shift, body.length + 8).subarray(8);
      buf.set(body);
      const r = new Reader(buf, true);
      r.owned = hint;
      const v = decodeValue(r, scalarArray('long'), undefined) as BigInt64Array;
      expect(r.pos).toBe(body.length);
      // (the array's bytes follow its 5-byte size)
      return { v, view: v.buffer === buf.buffer, moved: v.byteOffset !== buf.byteOffset + 5 };
    };
    const first = decodeAt(0);
    expect(Array.from(first.v)).toEqual(Array.from(values));
    expect(first).toMatchObject({ view: true, moved: true }); // the size prefix leaves it misaligned: no new memory all the same
    const second = decodeAt(hint.shift);
    expect(second).toMatchObject({ view: true, moved: false });
    expect(Array.from(second.v)).toEqual(Array.from(values));
  });

  it('a misaligned array that would move onto an earlier array of the message is a copy; both hold their values', () => {
    // A byte array, then an int64 array whose elements sit 7 bytes past an 8-byte boundary: moving
    // them back would reach into the byte array's view.
    const bytesV = Int8Array.from({ length: 65_541 }, (_, i) => (i * 7) % 127);
    const longs = BigInt64Array.from({ length: 10_000 }, (_, i) => BigInt(i) - 77n);
    const w = new Writer(true);
    encodeValue(w, scalarArray('byte'), bytesV);
    encodeValue(w, scalarArray('long'), longs);
    const body = w.take();
    const buf = new Uint8Array(new ArrayBuffer(body.length + 16), 0, body.length + 8).subarray(8);
    buf.set(body);
    const r = new Reader(buf, true);
    r.owned = { shift: 0 };
    const a = decodeValue(r, scalarArray('byte'), undefined) as Int8Array;
    const b = decodeValue(r, scalarArray('long'), undefined) as BigInt64Array;
    expect((8 + 5 + bytesV.length + 5) % 8).toBe(7);
    expect(a.buffer).toBe(buf.buffer);
    expect(b.buffer).not.toBe(buf.buffer);
    expect(Array.from(a)).toEqual(Array.from(bytesV));
    expect(Array.from(b)).toEqual(Array.from(longs));
  });
});
