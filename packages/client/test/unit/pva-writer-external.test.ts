// A writer that holds large arrays by reference (the server's) writes the same bytes as one that
// copies them: messages around, between and after such arrays, sizes in the headers counting
// them, a message that fails to encode forgotten with the arrays it had taken.
import { describe, expect, it } from 'vitest';
import { BitSet, encodeMessage, scalar, scalarArray, structure, Writer, type Message } from '../../src/pva/index.js';

const TYPE = structure('epics:nt/NTScalarArray:1.0', { value: scalarArray('double'), n: scalar('int') });
const update = (requestId: number, value: Float64Array, n: unknown = value.length): Message => ({
  type: 'MonitorUpdate',
  requestId,
  subcommand: 0,
  changed: BitSet.of(0),
  valueType: TYPE,
  value: { value, n: n as number },
});

function bytesOf(chunks: Uint8Array[]): number[] {
  return chunks.flatMap((c) => Array.from(c));
}

describe('a writer holding large arrays by reference', () => {
  const big = Float64Array.from({ length: 20_000 }, (_, i) => i * 0.5);
  const small = Float64Array.from([1, 2, 3]);
  const messages = [update(1, small), update(2, big), update(3, big), update(4, small)];

  it('takes the same bytes as a copying writer, the arrays not copied', () => {
    const copying = new Writer(true);
    const holding = new Writer(true, 1024, true);
    for (const m of messages) {
      encodeMessage(copying, m);
      encodeMessage(holding, m);
    }
    const want = Array.from(copying.take());
    const chunks = holding.takeChunks();
    expect(bytesOf(chunks)).toEqual(want);
    // The big array's bytes are its own memory, twice.
    expect(chunks.filter((c) => c.buffer === big.buffer)).toHaveLength(2);
    expect(holding.length).toBe(0);
    expect(holding.takeChunks()).toEqual([new Uint8Array(0)]);
  });

  it('take() joins them into one array of its own', () => {
    const holding = new Writer(true, 1024, true);
    const copying = new Writer(true);
    for (const m of messages) {
      encodeMessage(holding, m);
      encodeMessage(copying, m);
    }
    const one = holding.take();
    expect(one.buffer).not.toBe(big.buffer);
    expect(Array.from(one)).toEqual(Array.from(copying.take()));
  });

  it('a message that fails to encode leaves nothing, the arrays it had taken included', () => {
    const holding = new Writer(true, 1024, true);
    encodeMessage(holding, update(1, small));
    const bad = update(2, big, 'not a number');
    expect(() => encodeMessage(holding, bad)).toThrow(TypeError);
    const copying = new Writer(true);
    encodeMessage(copying, update(1, small));
    expect(bytesOf(holding.takeChunks())).toEqual(Array.from(copying.take()));
  });

  it('a copying writer (the client) never holds one: a put sends what the array held when it was encoded', () => {
    const w = new Writer(true);
    const a = Float64Array.from({ length: 20_000 }, () => 7);
    encodeMessage(w, update(1, a));
    a.fill(8);
    const out = w.takeChunks();
    expect(out).toHaveLength(1);
    expect(out[0]!.buffer).not.toBe(a.buffer);
    const hex = Buffer.from(out[0]!).toString('hex');
    expect(hex).toContain(Buffer.from(new Float64Array([7, 7]).buffer).toString('hex'));
    expect(hex).not.toContain(Buffer.from(new Float64Array([8]).buffer).toString('hex'));
  });
});

describe("a writer's big outputs", () => {
  it('are handed over whole; the next buffer is as big as the output, not as the buffer grew (a flush of acks after a large set-up)', () => {
    const w = new Writer(true);
    const fill = (n: number, b: number) => {
      const o = w.reserve(n);
      w.bytes.fill(b, o, o + n);
    };
    fill(3 << 20, 1); // thousands of requests: the buffer grows to 4 MB
    const first = w.take();
    expect(first.length).toBe(3 << 20);
    expect(w.bytes.length).toBeLessThanOrEqual(1 << 20);
    fill(20_000, 2);
    const acks = w.take();
    expect(acks.length).toBe(20_000);
    expect(acks.every((b) => b === 2)).toBe(true);
    expect(w.bytes.length).toBe(32_768);
    // What was handed over is not written again.
    fill(20_000, 3);
    expect(first.every((b) => b === 1) && acks.every((b) => b === 2)).toBe(true);
    expect(w.take().every((b) => b === 3)).toBe(true);
  });
});
