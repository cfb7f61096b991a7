// The TCP framer: push(chunk) delivers every complete message, keeps partial bytes, joins
// segmented messages, and reports malformed framing as a protocol error (it never throws).
import { Flags, HEADER_SIZE } from './constants.js';
import { emptyHeader, isControl, readHeader, segmentOf, type PvaHeader } from './header.js';

/**
 * Called once per message. Control messages come with an empty payload (their datum is
 * header.payloadSize). `payload` and `header` are only valid during the call.
 */
export type MessageHandler = (header: PvaHeader, payload: Uint8Array) => void;
export type ErrorHandler = (reason: string) => void;

const EMPTY = new Uint8Array(0);
export const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024;

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

  constructor(
    private readonly onMessage: MessageHandler,
    private readonly onError: ErrorHandler,
    /** Largest payload (also of a joined segmented message) accepted. */
    public maxPayload = DEFAULT_MAX_PAYLOAD,
  ) {}

  /** True once a protocol error was reported; later input is ignored. */
  get hasFailed(): boolean { return this.failed; }

  /** Bytes buffered for an incomplete message. */
  get buffered(): number { return this.pendingLen + this.segLen; }

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
    this.pending.copyWithin(0, used, this.pendingLen);
    this.pendingLen -= used;
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
    // A large message has begun: make room for all of it now, not by doubling as it arrives.
    const h = this.header;
    if (need >= HEADER_SIZE && need < 1 << 20 && readHeader(this.pending, 0, h) && !isControl(h.flags)) {
      const whole = HEADER_SIZE + h.payloadSize;
      if (whole > this.pending.length && h.payloadSize <= this.maxPayload) {
        const nb = new Uint8Array(whole);
        nb.set(this.pending.subarray(0, need));
        this.pending = nb;
      }
    }
  }

  /** Deliver the complete messages in buf[0, end); returns the bytes consumed. */
  private parse(buf: Uint8Array, end: number): number {
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
      const payload = buf.subarray(pos + HEADER_SIZE, pos + HEADER_SIZE + h.payloadSize);
      pos += HEADER_SIZE + h.payloadSize;
      this.application(h, payload);
    }
    return pos;
  }

  private application(h: PvaHeader, payload: Uint8Array): void {
    const seg = segmentOf(h.flags);
    if (seg === 0) {
      if (this.segHeader) return this.fail(`unsegmented message (command ${h.command}) inside a segmented one`);
      this.onMessage(h, payload);
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
