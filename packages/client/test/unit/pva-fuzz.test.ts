// Decoder fuzz: thousands of seeded random mutations of the captured messages through the
// framer and the decoder, which must never throw (malformed input becomes Invalid or an error).
import { describe, expect, it } from 'vitest';
import { decodeMessage, TypeCache } from '../../src/pva/index.js';
import { Framer } from '../../src/pva/framer.js';
import { FIXTURES, loadFixture } from '../helpers/pva-fixtures.js';
import type { StructureDesc } from '../../src/pva/index.js';

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mutate(src: Uint8Array, r: () => number): Uint8Array {
  let b = src.slice();
  const n = 1 + Math.floor(r() * 4);
  for (let k = 0; k < n; k++) {
    const op = r();
    const i = 8 + Math.floor(r() * Math.max(1, b.length - 8));
    if (op < 0.5 && i < b.length) b[i] = Math.floor(r() * 256);
    else if (op < 0.65 && i < b.length) b[i] = [0xff, 0xfe, 0xfd, 0x00, 0x7f, 0x80][Math.floor(r() * 6)]!;
    else if (op < 0.8) b = b.subarray(0, Math.min(b.length, i)).slice();
    else {
      const ins = new Uint8Array(1 + Math.floor(r() * 6)).map(() => Math.floor(r() * 256));
      const out = new Uint8Array(b.length + ins.length);
      out.set(b.subarray(0, i));
      out.set(ins, i);
      out.set(b.subarray(i), i + ins.length);
      b = out;
    }
  }
  // Keep the header's size honest most of the time, so the payload reaches the decoder.
  if (b.length >= 8 && r() < 0.9) new DataView(b.buffer, b.byteOffset).setUint32(4, b.length - 8, (b[2]! & 0x80) === 0);
  return b;
}

describe('decoder fuzz', () => {
  it('5000 seeded mutations never throw', () => {
    const r = rng(20240611);
    const msgs = FIXTURES.flatMap((f) => loadFixture(f).map((m) => m.bytes));
    const kinds = new Map<string, number>();
    // Data of requests whose INIT reply is not in the same input decodes against the NTScalar type.
    const ntScalar = loadFixture('get')
      .map((m) => m.bytes)
      .find((b) => b[3] === 0x0a && b[2] === 0x40 && b[12] === 0x08)!;
    const initType = (
      decodeMessage({ version: 2, flags: 0x40, command: 0x0a, payloadSize: ntScalar.length - 8 }, ntScalar.subarray(8)) as {
        valueType: StructureDesc;
      }
    ).valueType;
    for (let i = 0; i < 5000; i++) {
      const src = msgs[Math.floor(r() * msgs.length)]!;
      const b = mutate(src, r);
      const types = new TypeCache();
      const ops = new Map<number, StructureDesc>();
      const framer = new Framer(
        (h, p) => {
          const m = decodeMessage(h, p, {
            types,
            operation: (id) => {
              return { type: ops.get(id) ?? initType };
            },
          });
          if (m.type === 'OpInitResponse' && m.valueType?.kind === 'structure') ops.set(m.requestId, m.valueType);
          kinds.set(m.type, (kinds.get(m.type) ?? 0) + 1);
        },
        () => kinds.set('framing error', (kinds.get('framing error') ?? 0) + 1),
        1 << 20,
      );
      expect(() => {
        framer.push(b);
        framer.push(b);
      }).not.toThrow();
    }
    expect(kinds.get('Invalid') ?? 0).toBeGreaterThan(100);
  });
});
