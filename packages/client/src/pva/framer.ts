// The TCP framer: push(chunk) delivers every complete message, keeps partial bytes, joins
// segmented messages, reports malformed framing as a protocol error (it never throws), and lets
// the transport read a large message straight into its own buffer (directTarget/commitDirect).
import { Flags, HEADER_SIZE } from './constants.js';
import { emptyHeader, isControl, readHeader, segmentOf, type PvaHeader } from './header.js';

/**
 * Where the next large message's buffer starts within its 8-byte word (0-7), so that the array it
 * carries lands aligned: the decoder of an owned payload sets it (src/pva/values.ts).
 */
export interface AlignHint {
  shift: number;
}

/**
 * Called once per message. Control messages come with an empty payload (their datum is
 * header.payloadSize). `payload` and `header` are only valid during the call, unless `owned` is
 * given: then the payload is the message's own buffer (read straight from the socket), never
 * reused by the framer, and views of it may be kept.
 */
export type MessageHandler = (header: PvaHeader, payload: Uint8Array, owned?: AlignHint) => void;
/**
 * Offered each whole, unsegmented message in a shared buffer before the MessageHandler, as bytes
 * [start, end) of `bytes` (valid during the call): true when it took the message, which then
 * needs no view of its own.
 */
export type InPlaceHandler = (header: PvaHeader, bytes: Uint8Array, start: number, end: number) => boolean;
export type ErrorHandler = (reason: string) => void;

const EMPTY = new Uint8Array(0);
export const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;
/** Messages from this size up get a buffer of their own, and the socket may read into it. */
const LARGE_MESSAGE = 64 * 1024;
/**
 * Bytes of a large message (its header included) gathered before its buffer is chosen: enough for
 * the allocator to read what the message is (a monitor update's request id and changed bitset).
 */
const LARGE_PREFIX = 64;

/**
 * Gives the buffer of a large message: at least `size` bytes, need not be zeroed. `prefix` holds
 * the message's first bytes (its header, then the start of its payload), valid during the call.
 */
export type LargeAllocator = (size: number, prefix: Uint8Array) => ArrayBuffer;

export class Framer {
  private readonly header: PvaHeader = emptyHeader();
  /** Bytes of an incomplete message (valid up to pendingLen). */
  private pending = EMPTY;
  private pendingLen = 0;
  /** Segmented message being joined: its first header and the payload so far. */
  private segHeader: PvaHeader | undefined;
  private segBuf = EMPTY;
  private segLen = 0;
  private failed = false;
  /** End of the large message filling `pending` (0: none). */
  private largeEnd = 0;
  private readonly align: AlignHint = { shift: 0 };

  constructor(
    private readonly onMessage: MessageHandler,
    private readonly onError: ErrorHandler,
    /** Largest payload (also of a joined segmented message) accepted. */
    public maxPayload = DEFAULT_MAX_PAYLOAD,
    /** Allocates the buffer of a large message. */
    private readonly allocate: LargeAllocator = (n) => new ArrayBuffer(n),
    private readonly inPlace?: InPlaceHandler,
  ) {}

  /** True once a protocol error was reported; later input is ignored. */
  get hasFailed(): boolean {
    return this.failed;
  }

  /** Bytes buffered for an incomplete message. */
  get buffered(): number {
    return this.pendingLen + this.segLen;
  }

  /** Feed bytes from the stream; `chunk` may be reused by the caller after this returns. */
  push(chunk: Uint8Array): void {
    if (this.failed || chunk.length === 0) return;
    if (this.pendingLen === 0) {
      const used = this.parse(chunk, chunk.length);
      if (!this.failed && used < chunk.length) this.keep(chunk.subarray(used));
      return;
    }
    this.keep(chunk);
    const used = this.parse(this.pending, this.pendingLen);
    if (this.failed) return;
    if (used === 0) return;
    this.largeEnd = 0; // the large message (if any) was delivered
    this.pending.copyWithin(0, used, this.pendingLen);
    this.pendingLen -= used;
    this.planLarge();
  }

  private keep(bytes: Uint8Array): void {
    const need = this.pendingLen + bytes.length;
    if (need > this.pending.length) {
      const nb = new Uint8Array(Math.max(need, this.pending.length * 2, 256));
      nb.set(this.pending.subarray(0, this.pendingLen));
      this.pending = nb;
    }
    this.pending.set(bytes, this.pendingLen);
    this.pendingLen = need;
    if (this.largeEnd === 0) this.planLarge();
  }

  /**
   * A large message has begun at the start of `pending`: make room for all of it now (not by
   * doubling as it arrives), in a buffer of its own that direct reads may fill.
   */
  private planLarge(): void {
    const h = this.header;
    const have = this.pendingLen;
    if (have < HEADER_SIZE || have >= 1 << 20 || !readHeader(this.pending, 0, h) || isControl(h.flags)) return;
    const whole = HEADER_SIZE + h.payloadSize;
    if (whole <= have || h.payloadSize > this.maxPayload) return;
    if (whole >= LARGE_MESSAGE && have < LARGE_PREFIX) return; // planned once more bytes came
    if (whole < LARGE_MESSAGE) {
      if (whole > this.pending.length) {
        const nb = new Uint8Array(whole);
        nb.set(this.pending.subarray(0, have));
        this.pending = nb;
      }
      return;
    }
    const nb = new Uint8Array(this.allocate(whole + 8, this.pending.subarray(0, have)), this.align.shift, whole);
    nb.set(this.pending.subarray(0, have));
    this.pending = nb;
    this.largeEnd = whole;
  }

  /**
   * Where the next socket read may land directly: the unfilled rest of a large incomplete message
   * (it starts the buffer, which was sized for it), or undefined (then read a chunk and push()).
   */
  directTarget(): Uint8Array | undefined {
    const end = this.largeEnd;
    // Even a short rest is read in place: the message then arrives whole in its own buffer.
    if (end === 0 || this.failed || end <= this.pendingLen) return undefined;
    return this.pending.subarray(this.pendingLen, end);
  }

  /** `n` bytes were read into the last directTarget(); a complete message is delivered as owned. */
  commitDirect(n: number): void {
    if (this.failed || this.largeEnd === 0) return;
    this.pendingLen += n;
    if (this.pendingLen < this.largeEnd) return;
    const buf = this.pending;
    const end = this.pendingLen;
    // The buffer goes with the message: the next one gets another (new, or one handed back).
    this.pending = EMPTY;
    this.pendingLen = 0;
    this.largeEnd = 0;
    this.parse(buf, end, this.align);
  }

  /** Deliver the complete messages in buf[0, end); returns the bytes consumed. */
  private parse(buf: Uint8Array, end: number, owned?: AlignHint): number {
    let pos = 0;
    const h = this.header;
    while (end - pos >= HEADER_SIZE && !this.failed) {
      if (!readHeader(buf, pos, h)) {
        this.fail(`bad magic byte 0x${buf[pos]!.toString(16)}`);
        return end;
      }
      if (isControl(h.flags)) {
        pos += HEADER_SIZE;
        this.onMessage(h, EMPTY);
        continue;
      }
      if (h.payloadSize > this.maxPayload) {
        this.fail(`payload of ${h.payloadSize} bytes (command ${h.command}) exceeds the limit of ${this.maxPayload}`);
        return end;
      }
      if (end - pos - HEADER_SIZE < h.payloadSize) break;
      const start = pos + HEADER_SIZE;
      pos = start + h.payloadSize;
      if (!owned && !this.segHeader && segmentOf(h.flags) === 0 && this.inPlace?.(h, buf, start, pos)) continue;
      this.application(h, buf.subarray(start, pos), owned);
    }
    return pos;
  }

  private application(h: PvaHeader, payload: Uint8Array, owned: AlignHint | undefined): void {
    const seg = segmentOf(h.flags);
    if (seg === 0) {
      if (this.segHeader) return this.fail(`unsegmented message (command ${h.command}) inside a segmented one`);
      if (owned) this.onMessage(h, payload, owned);
      else this.onMessage(h, payload);
      return;
    }
    if (seg === Flags.SEGMENT_FIRST) {
      if (this.segHeader) return this.fail('a second first segment before the last one');
      this.segHeader = { ...h, flags: h.flags & ~Flags.SEGMENT_MASK };
      this.segLen = 0;
      this.appendSegment(payload);
      return;
    }
    const first = this.segHeader;
    if (!first) return this.fail('a middle or last segment without a first one');
    if (first.command !== h.command) return this.fail(`segment of command ${h.command} continues command ${first.command}`);
    if (!this.appendSegment(payload)) return;
    if (seg === Flags.SEGMENT_LAST) {
      const whole = this.segBuf.subarray(0, this.segLen);
      first.payloadSize = this.segLen;
      this.segHeader = undefined;
      this.segBuf = EMPTY;
      this.segLen = 0;
      this.onMessage(first, whole);
    }
  }

  private appendSegment(payload: Uint8Array): boolean {
    const need = this.segLen + payload.length;
    if (need > this.maxPayload) {
      this.fail(`segmented payload of ${need} bytes exceeds the limit of ${this.maxPayload}`);
      return false;
    }
    if (need > this.segBuf.length) {
      const nb = new Uint8Array(Math.max(need, this.segBuf.length * 2, 256));
      nb.set(this.segBuf.subarray(0, this.segLen));
      this.segBuf = nb;
    }
    this.segBuf.set(payload, this.segLen);
    this.segLen = need;
    return true;
  }

  /** Stop delivering messages (the connection is closing); later input is ignored. */
  stop(): void {
    this.failed = true;
    this.reset();
  }

  private reset(): void {
    this.pending = EMPTY;
    this.pendingLen = 0;
    this.largeEnd = 0;
    this.segHeader = undefined;
    this.segBuf = EMPTY;
    this.segLen = 0;
  }

  private fail(reason: string): void {
    this.failed = true;
    this.reset();
    this.onError(reason);
  }
}
