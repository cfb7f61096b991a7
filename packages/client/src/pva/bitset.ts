// BitSet: which fields of a structure a message carries (changed, overrun, to-put), and its
// wire form: a size in bytes, whole 64-bit words in the message byte order, then trailing bytes.
import { DecodeError, type Reader, type Writer } from './buffer.js';

export class BitSet {
  /** 32-bit words, least significant first. */
  private words: number[];

  constructor(bits?: Iterable<number>) {
    this.words = [];
    if (bits) for (const b of bits) this.set(b);
  }

  static of(...bits: number[]): BitSet {
    return new BitSet(bits);
  }

  get(i: number): boolean {
    const w = this.words[i >>> 5];
    return w !== undefined && (w & (1 << (i & 31))) !== 0;
  }

  set(i: number): this {
    const k = i >>> 5;
    while (this.words.length <= k) this.words.push(0);
    this.words[k] = (this.words[k]! | (1 << (i & 31))) >>> 0;
    return this;
  }

  clear(i?: number): this {
    if (i === undefined) {
      this.words.length = 0;
      return this;
    }
    const k = i >>> 5;
    if (k < this.words.length) this.words[k] = (this.words[k]! & ~(1 << (i & 31))) >>> 0;
    return this;
  }

  /** Add every bit of `other`. */
  or(other: BitSet): this {
    for (let k = 0; k < other.words.length; k++) {
      while (this.words.length <= k) this.words.push(0);
      this.words[k] = (this.words[k]! | other.words[k]!) >>> 0;
    }
    return this;
  }

  /** The set bits as a key, the same for equal sets (trailing empty words aside): a number while they fit in 32 bits. */
  key(): number | string {
    let n = this.words.length;
    while (n > 0 && this.words[n - 1] === 0) n--;
    return n <= 1 ? (this.words[0] ?? 0) : this.words.slice(0, n).join(',');
  }

  /** True when any bit in [from, to) is set. */
  anyIn(from: number, to: number): boolean {
    for (let i = from; i < to; i++) {
      const w = this.words[i >>> 5];
      if (w === undefined) return false;
      if (w === 0) {
        i |= 31;
        continue;
      }
      if (w & (1 << (i & 31))) return true;
    }
    return false;
  }

  isEmpty(): boolean {
    return this.words.every((w) => w === 0);
  }

  /** The set bits in ascending order. */
  toArray(): number[] {
    const out: number[] = [];
    this.words.forEach((w, k) => {
      for (let b = 0; b < 32; b++) if (w & (1 << b)) out.push(k * 32 + b);
    });
    return out;
  }

  /** Bytes in the least-significant-first order, without trailing zero bytes. */
  private toBytes(): number[] {
    const out: number[] = [];
    for (const w of this.words) out.push(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
    while (out.length && out[out.length - 1] === 0) out.pop();
    return out;
  }

  encode(w: Writer): void {
    if (this.words.length <= 1) {
      // Up to 32 bits (a monitor update's usual): the bytes up to the highest set, no list made.
      const x = this.words[0] ?? 0;
      const n = x === 0 ? 0 : x < 0x100 ? 1 : x < 0x10000 ? 2 : x < 0x1000000 ? 3 : 4;
      w.size(n);
      for (let i = 0; i < n; i++) w.u8((x >>> (8 * i)) & 0xff);
      return;
    }
    const bytes = this.toBytes();
    w.size(bytes.length);
    const whole = bytes.length & ~7;
    for (let i = 0; i < whole; i += 8) {
      // A whole word goes out as a 64-bit integer in the writer's byte order.
      const o = w.reserve(8);
      for (let j = 0; j < 8; j++) w.bytes[o + (w.littleEndian ? j : 7 - j)] = bytes[i + j]!;
    }
    for (let i = whole; i < bytes.length; i++) w.u8(bytes[i]!);
  }

  /** Read a bit set (into `into`, emptied first, when given: a set read for each message need not be a new one). */
  static decode(r: Reader, into?: BitSet): BitSet {
    const n = r.count();
    r.need(n);
    if (n > 1 << 22) throw new DecodeError('bitset too large');
    const bs = into ?? new BitSet();
    const bytes = r.bytes;
    let pos = r.pos;
    if (n > 0 && n <= 4) {
      // Up to 32 bits (a monitor update's usual): one word, in place of the one `into` holds.
      let w = 0;
      for (let i = 0; i < n; i++) w |= bytes[pos + i]! << (i * 8);
      r.pos = pos + n;
      if (bs.words.length !== 1) bs.words.length = 1;
      bs.words[0] = w >>> 0;
      return bs;
    }
    if (into) into.words.length = 0;
    if (n === 0) return bs;
    const words = new Array<number>((n + 3) >> 2).fill(0);
    const whole = n & ~7;
    for (let i = 0; i < whole; i += 8) {
      // A whole 64-bit word in the message byte order.
      for (let j = 0; j < 8; j++) {
        const idx = i + j;
        words[idx >>> 2] = (words[idx >>> 2]! | (bytes[pos + (r.littleEndian ? j : 7 - j)]! << ((idx & 3) * 8))) >>> 0;
      }
      pos += 8;
    }
    for (let i = whole; i < n; i++) words[i >>> 2] = (words[i >>> 2]! | (bytes[pos++]! << ((i & 3) * 8))) >>> 0;
    r.pos = pos;
    bs.words = words;
    return bs;
  }
}
