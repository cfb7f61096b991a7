// Byte reader and writer for PV Access payloads: either byte order, the 1/5-byte size
// encoding, UTF-8 strings. The reader throws DecodeError, which message decoders catch.
import { ByteWriter } from '../wire/byte-writer.js';

/** Malformed input; never escapes the message decoders (they report it as an Invalid message). */
export class DecodeError extends Error {
  override name = 'DecodeError';
}

const utf8Decoder = new TextDecoder('utf-8', { fatal: false });
const utf8Encoder = new TextEncoder();

/** The DataView of the buffer read last: a connection reads many messages out of one buffer. */
let lastBuffer: ArrayBufferLike | undefined;
let lastView: DataView | undefined;

function viewOf(buffer: ArrayBufferLike): DataView {
  if (buffer !== lastBuffer) {
    lastView = new DataView(buffer);
    lastBuffer = buffer;
  }
  return lastView!;
}

/** The 64-bit integer read last: its bytes (as two little-endian words), their byte order, and its value. */
interface Last64 {
  lo: number;
  hi: number;
  le: boolean;
  v: bigint;
}
const last64: Last64 = { lo: 0, hi: 0, le: true, v: 0n };
const lastU64: Last64 = { lo: 0, hi: 0, le: true, v: 0n };

/**
 * 64-bit integers made ahead of a count, by value modulo AHEAD: once a value read is the one after
 * the last new one (a timestamp's seconds), the count's next values are kept made, each well
 * before it is read, with the one before the current (late updates of the last second). A bigint
 * made when its second comes is young, and every monitor's base that stores it (./updates.ts) is
 * a slot each young collection visits until the bigint is old: 100,000 monitors of counters made
 * V8's young collections 20 to 40 times slower than the CA client's. One made 14 seconds before
 * is old by then.
 */
const AHEAD = 16;
const aheadKeys = new Float64Array(AHEAD).fill(Number.NaN);
const aheadValues = new Array<bigint>(AHEAD).fill(0n);
/** The last value read that was not made ahead (NaN: none yet). */
let lastNew = Number.NaN;

function makeAhead(n: number): void {
  const slot = n & (AHEAD - 1);
  if (aheadKeys[slot] === n) return;
  aheadKeys[slot] = n;
  aheadValues[slot] = BigInt(n);
}

/** `v`, or the bigint of its value made ahead; keeps a count's next values made. */
function counted(v: bigint): bigint {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n > Number.MAX_SAFE_INTEGER - AHEAD) return v;
  const slot = n & (AHEAD - 1);
  if (aheadKeys[slot] === n) {
    makeAhead(n + AHEAD - 2);
    return aheadValues[slot]!;
  }
  if (n === lastNew + 1) for (let k = 1; k < AHEAD - 1; k++) makeAhead(n + k);
  lastNew = n;
  return v;
}

export class Reader {
  /** A view of the whole buffer `bytes` is in, shared with the readers of other messages in it. */
  private view: DataView;
  /** Where `bytes` starts in it. */
  private base: number;
  pos: number;
  end: number;
  /**
   * Set when `bytes` is a message's own buffer (see the framer's AlignHint): a large array of
   * native byte order may then be a view of it rather than a copy.
   */
  owned: { shift: number } | undefined = undefined;
  /** In an owned buffer: where the last array handed out as a view of it ends (bytes before it may be written over). */
  viewEnd = 0;

  constructor(
    public bytes: Uint8Array,
    public littleEndian: boolean,
    start = 0,
    end = bytes.length,
  ) {
    this.view = viewOf(bytes.buffer);
    this.base = bytes.byteOffset;
    this.pos = start;
    this.end = end;
  }

  /** Read bytes [start, end) of `bytes` from now on, as a new reader would (one reader for many messages). */
  reset(bytes: Uint8Array, littleEndian: boolean, start = 0, end = bytes.length): this {
    if (bytes !== this.bytes) {
      this.bytes = bytes;
      this.view = viewOf(bytes.buffer);
      this.base = bytes.byteOffset;
    }
    this.littleEndian = littleEndian;
    this.pos = start;
    this.end = end;
    this.owned = undefined;
    this.viewEnd = 0;
    return this;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  need(n: number): void {
    if (n < 0 || this.pos + n > this.end) throw new DecodeError(`truncated: need ${n} bytes at ${this.pos}, have ${this.end - this.pos}`);
  }

  u8(): number {
    this.need(1);
    return this.bytes[this.pos++]!;
  }
  i8(): number {
    this.need(1);
    return this.view.getInt8(this.base + this.pos++);
  }
  bool(): boolean {
    return this.u8() !== 0;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.base + this.pos, this.littleEndian);
    this.pos += 2;
    return v;
  }
  i16(): number {
    this.need(2);
    const v = this.view.getInt16(this.base + this.pos, this.littleEndian);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.base + this.pos, this.littleEndian);
    this.pos += 4;
    return v;
  }
  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.base + this.pos, this.littleEndian);
    this.pos += 4;
    return v;
  }
  i64(): bigint {
    return this.big(last64, true);
  }
  u64(): bigint {
    return this.big(lastU64, false);
  }
  /**
   * A 64-bit integer: the one read last in the same bytes and byte order when it is that one (a
   * timestamp's seconds, the same in every update of a second), else a new bigint. Many updates
   * then share one bigint rather than each allocating its own, which a monitor keeps until its
   * next update.
   */
  private big(last: Last64, signed: boolean): bigint {
    this.need(8);
    const at = this.base + this.pos;
    const lo = this.view.getUint32(at, true);
    const hi = this.view.getUint32(at + 4, true);
    this.pos += 8;
    if (lo === last.lo && hi === last.hi && this.littleEndian === last.le) return last.v;
    const v = counted(signed ? this.view.getBigInt64(at, this.littleEndian) : this.view.getBigUint64(at, this.littleEndian));
    last.lo = lo;
    last.hi = hi;
    last.le = this.littleEndian;
    last.v = v;
    return v;
  }
  f32(): number {
    this.need(4);
    const v = this.view.getFloat32(this.base + this.pos, this.littleEndian);
    this.pos += 4;
    return v;
  }
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.base + this.pos, this.littleEndian);
    this.pos += 8;
    return v;
  }

  /** A size: one byte below 254, 254 then an int32, 255 for null (returned as -1). */
  size(): number {
    const b = this.u8();
    if (b < 254) return b;
    if (b === 255) return -1;
    const n = this.i32();
    if (n < 0) throw new DecodeError(`negative size ${n}`);
    if (n === 0x7fffffff) throw new DecodeError('64-bit sizes are not supported');
    return n;
  }

  /** A size that must not be null. */
  count(): number {
    const n = this.size();
    if (n < 0) throw new DecodeError('null where a size is required');
    return n;
  }

  /** `n` raw bytes as a view into the input. */
  raw(n: number): Uint8Array {
    this.need(n);
    const out = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A size-prefixed UTF-8 string (a null string reads as ""). */
  string(): string {
    const n = this.size();
    if (n <= 0) return '';
    this.need(n);
    const b = this.bytes;
    const start = this.pos;
    this.pos += n;
    if (n <= SHORT_STRING) return shortString(b, start, n);
    if (n < 64) {
      let s = '';
      for (let i = start; i < start + n; i++) {
        const c = b[i]!;
        if (c > 127) return utf8Decoder.decode(b.subarray(start, start + n));
        s += String.fromCharCode(c);
      }
      return s;
    }
    return utf8Decoder.decode(b.subarray(start, start + n));
  }
}

/** Strings up to this many bytes are read through SHORT_STRINGS. */
const SHORT_STRING = 16;
/**
 * The last short ASCII string read into each of 512 slots (by a hash of its bytes): an alarm
 * message ("HIGH", "NO_ALARM") or an enum choice read again is the same string, not a new one
 * kept per monitor.
 */
const SHORT_STRINGS: (string | undefined)[] = new Array(512).fill(undefined);

function shortString(b: Uint8Array, start: number, n: number): string {
  let h = n;
  for (let i = start; i < start + n; i++) {
    const c = b[i]!;
    if (c > 127) return utf8Decoder.decode(b.subarray(start, start + n));
    h = (Math.imul(h, 31) + c) | 0;
  }
  const slot = h & 511;
  const hit = SHORT_STRINGS[slot];
  if (hit !== undefined && hit.length === n) {
    let same = true;
    for (let k = 0; k < n; k++)
      if (hit.charCodeAt(k) !== b[start + k]) {
        same = false;
        break;
      }
    if (same) return hit;
  }
  let s = '';
  for (let i = start; i < start + n; i++) s += String.fromCharCode(b[i]!);
  SHORT_STRINGS[slot] = s;
  return s;
}

export class Writer extends ByteWriter {
  constructor(
    public littleEndian = true,
    initial = 1024,
    /** Hold large array payloads by reference rather than copy them (a server's posted values: they are not changed after). */
    private readonly byReference = false,
  ) {
    super(initial);
  }

  u8(v: number): void {
    const o = this.reserve(1);
    this.bytes[o] = v & 0xff;
  }
  bool(v: boolean): void {
    this.u8(v ? 1 : 0);
  }
  u16(v: number): void {
    const o = this.reserve(2);
    this.dataView.setUint16(o, v & 0xffff, this.littleEndian);
  }
  i16(v: number): void {
    const o = this.reserve(2);
    this.dataView.setInt16(o, v, this.littleEndian);
  }
  u32(v: number): void {
    const o = this.reserve(4);
    this.dataView.setUint32(o, v >>> 0, this.littleEndian);
  }
  i32(v: number): void {
    const o = this.reserve(4);
    this.dataView.setInt32(o, v | 0, this.littleEndian);
  }
  i64(v: bigint): void {
    const o = this.reserve(8);
    this.dataView.setBigInt64(o, BigInt.asIntN(64, v), this.littleEndian);
  }
  u64(v: bigint): void {
    const o = this.reserve(8);
    this.dataView.setBigUint64(o, BigInt.asUintN(64, v), this.littleEndian);
  }
  f32(v: number): void {
    const o = this.reserve(4);
    this.dataView.setFloat32(o, v, this.littleEndian);
  }
  f64(v: number): void {
    const o = this.reserve(8);
    this.dataView.setFloat64(o, v, this.littleEndian);
  }

  /** A size; -1 writes the null size (255). */
  size(n: number): void {
    if (n < 0) this.u8(255);
    else if (n < 254) this.u8(n);
    else {
      this.u8(254);
      this.i32(n);
    }
  }

  raw(b: Uint8Array): void {
    if (this.byReference && this.external(b)) return;
    const o = this.reserve(b.length);
    this.bytes.set(b, o);
  }

  string(s: string): void {
    let ascii = true;
    for (let i = 0; i < s.length; i++)
      if (s.charCodeAt(i) > 127) {
        ascii = false;
        break;
      }
    if (!ascii) {
      const b = utf8Encoder.encode(s);
      this.size(b.length);
      this.raw(b);
      return;
    }
    this.size(s.length);
    const o = this.reserve(s.length);
    for (let i = 0; i < s.length; i++) this.bytes[o + i] = s.charCodeAt(i);
  }
}
