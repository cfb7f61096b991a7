// The circuit's table of subscriptions by id: the direct-mapped slots in front of the Map must
// answer exactly as the Map does, through collisions, deletions, growth and clearing, and the
// circuit must deliver each update to its own subscription through it.
import { describe, expect, it } from 'vitest';
import { ClientCircuit, type IoHandler } from '../../src/ca/circuit.js';
import { Framer } from '../../src/ca/framer.js';
import { IdTable } from '../../src/wire/id-table.js';

describe('IdTable', () => {
  it('answers as a Map through collisions, deletions, growth and clear', () => {
    const t = new IdTable<string>();
    const m = new Map<number, string>();
    let rnd = 7;
    const next = (n: number): number => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) % n;
    // Ids that share slots (multiples of the capacities apart), ids near 2^32, and a run of ids.
    const ids = [1, 65, 129, 64 + 1024, 2 ** 32 - 1, 2 ** 32 - 65, 2 ** 31, ...Array.from({ length: 500 }, (_, i) => 1000 + i)];
    for (let round = 0; round < 4000; round++) {
      const id = ids[next(ids.length)]!;
      const op = next(3);
      if (op === 0) {
        t.set(id, `v${round}`);
        m.set(id, `v${round}`);
      } else if (op === 1) expect(t.delete(id)).toBe(m.delete(id));
      else if (round === 3000) {
        t.clear();
        m.clear();
      }
      if (round % 50 === 0) for (const k of ids) expect([k, t.get(k), t.has(k)]).toEqual([k, m.get(k), m.has(k)]);
      expect(t.size).toBe(m.size);
    }
    expect([...t.values()].sort()).toEqual([...m.values()].sort());
  });

  it('grows with its entries and gives the slots back as they go', () => {
    const t = new IdTable<number>();
    for (let id = 1; id <= 10_000; id++) t.set(id, id);
    expect(t.capacity).toBe(32_768);
    for (let id = 1; id <= 10_000; id++) if (id % 500 !== 0) t.delete(id);
    expect(t.size).toBe(20);
    expect(t.capacity).toBe(128); // shrinks below an eighth full: 20 of 128 stays
    for (let id = 1; id <= 10_000; id++) expect(t.get(id)).toBe(id % 500 === 0 ? id : undefined);
  });
});

describe('the circuit finds subscriptions by id', () => {
  it('delivers each update in place to its own subscription, none to a cancelled one', () => {
    const circuit = new ClientCircuit({ wantFlush: () => {}, protocolError: (r) => expect.fail(r) });
    const got = new Map<number, number[]>();
    const subids: number[] = [];
    for (let n = 0; n < 300; n++) {
      const h: IoHandler = {
        onReply: () => expect.fail('delivered as a view'),
        onReplyAt: (hd, bytes, offset) => {
          got.get(n)!.push(new DataView(bytes.buffer, bytes.byteOffset).getFloat64(offset + 16));
          return hd.payloadSize === 24;
        },
        onFail: () => {},
      };
      got.set(n, []);
      subids.push(circuit.subscribe(n + 1, 20, 1, 5, h));
    }
    // Cancel every third; the updates of all 300 (a cancelled one's are the server's late ones).
    for (let n = 0; n < 300; n += 3) circuit.unsubscribe(subids[n]!, n + 1, 20, 1);
    const msg = new Uint8Array(300 * 40);
    const v = new DataView(msg.buffer);
    for (let n = 0; n < 300; n++) {
      const o = n * 40;
      v.setUint16(o, 1); // EVENT_ADD
      v.setUint16(o + 2, 24);
      v.setUint16(o + 4, 20); // DBR_TIME_DOUBLE
      v.setUint16(o + 6, 1);
      v.setUint32(o + 8, 1); // ECA_NORMAL
      v.setUint32(o + 12, subids[n]!);
      v.setFloat64(o + 32, n + 0.5);
    }
    new Framer(
      (h, p, o, ho) => circuit.receive(h, p, o, ho),
      (r) => expect.fail(r),
      1 << 16,
      undefined,
      { inPlace: (h, bytes, offset) => circuit.receiveAt(h, bytes, offset) },
    ).push(msg);
    for (let n = 0; n < 300; n++) expect(got.get(n)).toEqual(n % 3 === 0 ? [] : [n + 0.5]);
    expect(circuit.subscriptionCount).toBe(200);
  });
});
