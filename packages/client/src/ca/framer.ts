// The TCP framer: push(chunk) delivers every complete message, keeps partial bytes, handles
// extended headers, enforces a maximum payload (a protocol error, never a throw), and lets the
// transport read a large payload straight into its final buffer (directTarget/commitDirect),
// optionally converting its array elements to host byte order as they arrive.
import { Cmd, ECA_NORMAL, EXTENDED_HEADER_SIZE, HEADER_SIZE } from './constants.js';
import { dbrLayout } from './dbr.js';
import { emptyHeader, readHeader, type Header } from './header.js';
import { byteSwap } from './swap.js';

/**
 * Called once per message. `payload` is a view that is only valid during the call unless
 * `owned` is true (then it is a buffer of its own, offset 0, that the receiver may keep).
 * `hostOrder` is true when the array elements of a DBR payload were already converted to host
 * byte order (the header fields of the DBR stay big-endian). The header object is reused.
 */
export type MessageHandler = (header: Header, payload: Uint8Array, owned: boolean, hostOrder: boolean) => void;

/**
 * Offered first each message that lies whole in the chunk being pushed, at `offset` (its
 * payloadSize bytes, valid during the call only): true when it was handled there, false to have
 * it delivered as a view of its own to the MessageHandler. Saves a view per small message.
 */
export type InPlaceHandler = (header: Header, chunk: Uint8Array, offset: number) => boolean;

export interface FramerOptions {
  /**
   * Convert the elements of large DBR arrays (EVENT_ADD / READ_NOTIFY payloads that span reads)
   * to host byte order while they arrive, when the data is still in cache; such messages are
   * delivered with `hostOrder` true. Default false.
   */
  swapArrays?: boolean;
  /** See InPlaceHandler. */
  inPlace?: InPlaceHandler;
}
export type ErrorHandler = (reason: string) => void;

const EMPTY = new Uint8Array(0);
/** Payloads at least this big that are incomplete are read directly into their own buffer. */
export const DIRECT_READ_THRESHOLD = 64 * 1024;

export class Framer {
  private readonly header: Header = emptyHeader();
  private readonly carry = new Uint8Array(EXTENDED_HEADER_SIZE);
  private readonly carryView = new DataView(this.carry.buffer);
  private carryLen = 0;
  /** Payload buffer of the message in progress (undefined between messages). */
  private partial: Uint8Array | undefined;
  private filled = 0;
  private failed = false;
  /** In-place swap of the partial payload: element size (0: none), region end, bytes done. */
  private swapSize = 0;
  private swapEnd = 0;
  private swapped = 0;
  private readonly swapArrays: boolean;
  private readonly inPlace: InPlaceHandler | undefined;
  /** DataView of the last chunk's buffer (chunks are usually the same reused read buffer). */
  private view: DataView | undefined;

  constructor(
    private readonly onMessage: MessageHandler,
    private readonly onError: ErrorHandler,
    /** Largest payload accepted; anything bigger is a protocol error. */
    public maxPayload = 0xffffffff,
    /** Allocates the buffer of a payload that spans reads (offset 0; need not be zeroed). */
    private readonly allocate: (size: number) => Uint8Array = (n) => new Uint8Array(n),
    options: FramerOptions = {},
  ) {
    this.swapArrays = options.swapArrays === true;
    this.inPlace = options.inPlace;
  }

  private viewOf(chunk: Uint8Array): DataView {
    const v = this.view;
    if (v && v.buffer === chunk.buffer && v.byteOffset === chunk.byteOffset && v.byteLength >= chunk.length) return v;
    return (this.view = new DataView(chunk.buffer, chunk.byteOffset, chunk.length));
  }

  /** True once a protocol error was reported; later input is ignored. */
  get hasFailed(): boolean {
    return this.failed;
  }

  /** Bytes buffered for an incomplete message. */
  get pending(): number {
    return this.partial ? this.filled + HEADER_SIZE : this.carryLen;
  }

  /** Feed bytes from the stream. `chunk` may be reused by the caller after this returns. */
  push(chunk: Uint8Array): void {
    let pos = 0;
    const len = chunk.length;
    let view: DataView | undefined;
    while (pos < len && !this.failed) {
      if (this.partial) {
        const n = Math.min(this.partial.length - this.filled, len - pos);
        this.partial.set(chunk.subarray(pos, pos + n), this.filled);
        this.filled += n;
        pos += n;
        if (this.swapSize) this.swapProgress();
        if (this.filled === this.partial.length) this.finishPartial();
        continue;
      }
      if (this.carryLen > 0) {
        pos = this.fillCarry(chunk, pos);
        continue;
      }
      view ??= this.viewOf(chunk);
      const hs = readHeader(view, pos, len - pos, this.header);
      if (hs === 0) {
        this.carry.set(chunk.subarray(pos), 0);
        this.carryLen = len - pos;
        return;
      }
      pos += hs;
      pos = this.startPayload(chunk, pos);
    }
  }

  /** After a header is parsed: deliver the message if its payload is here, else start a partial. */
  private startPayload(chunk: Uint8Array, pos: number): number {
    const size = this.header.payloadSize;
    if (size > this.maxPayload) {
      this.fail(`payload of ${size} bytes (command ${this.header.command}) exceeds the limit of ${this.maxPayload}`);
      return chunk.length;
    }
    if (size === 0) {
      this.onMessage(this.header, EMPTY, false, false);
      return pos;
    }
    const avail = chunk.length - pos;
    if (avail >= size) {
      if (!this.inPlace?.(this.header, chunk, pos)) this.onMessage(this.header, chunk.subarray(pos, pos + size), false, false);
      return pos + size;
    }
    this.partial = this.allocate(size);
    this.partial.set(chunk.subarray(pos), 0);
    this.filled = avail;
    if (this.swapArrays) this.planSwap(size);
    return chunk.length;
  }

  /** For a DBR array reply spanning reads: where its elements lie, to swap them as they arrive. */
  private planSwap(size: number): void {
    const h = this.header;
    this.swapSize = 0;
    if ((h.command !== Cmd.EVENT_ADD && h.command !== Cmd.READ_NOTIFY) || h.param1 !== ECA_NORMAL || h.dataCount < 2) return;
    const l = dbrLayout(h.dataType);
    if (!l || l.native === 0 || l.elementSize < 2) return;
    const end = l.valueOffset + h.dataCount * l.elementSize;
    if (end > size) return; // too short for its count: the decoder reports it
    this.swapSize = l.elementSize;
    this.swapEnd = end;
    this.swapped = l.valueOffset;
    this.swapProgress();
  }

  /** Swap the whole elements received since the last call. */
  private swapProgress(): void {
    const size = this.swapSize;
    let upto = Math.min(this.filled, this.swapEnd);
    upto -= (upto - this.swapped) % size;
    if (upto <= this.swapped) return;
    byteSwap(this.partial!.subarray(this.swapped, upto), size);
    this.swapped = upto;
  }

  private fillCarry(chunk: Uint8Array, pos: number): number {
    // 16 bytes tell whether the header is extended; readHeader then wants 24.
    const need = this.carryLen < HEADER_SIZE ? HEADER_SIZE : EXTENDED_HEADER_SIZE;
    const n = Math.min(need - this.carryLen, chunk.length - pos);
    this.carry.set(chunk.subarray(pos, pos + n), this.carryLen);
    this.carryLen += n;
    pos += n;
    if (this.carryLen < HEADER_SIZE) return pos;
    if (readHeader(this.carryView, 0, this.carryLen, this.header) === 0) return pos; // extended: the rest next round
    this.carryLen = 0;
    return this.startPayload(chunk, pos);
  }

  private finishPartial(): void {
    const p = this.partial!;
    const hostOrder = this.swapSize !== 0;
    this.partial = undefined;
    this.filled = 0;
    this.swapSize = 0;
    this.onMessage(this.header, p, true, hostOrder);
  }

  /**
   * Where the next socket read may land directly: the unfilled rest of a large incomplete
   * payload, or undefined (then read into a normal chunk buffer and push()).
   */
  directTarget(): Uint8Array | undefined {
    const p = this.partial;
    if (!p || p.length - this.filled < DIRECT_READ_THRESHOLD) return undefined;
    return p.subarray(this.filled);
  }

  /** `n` bytes were read into the last directTarget(). */
  commitDirect(n: number): void {
    const p = this.partial;
    if (!p) return;
    this.filled += n;
    if (this.swapSize) this.swapProgress();
    if (this.filled >= p.length) this.finishPartial();
  }

  /** Stop delivering messages (the circuit is closing); later input is ignored. */
  stop(): void {
    this.failed = true;
    this.partial = undefined;
    this.swapSize = 0;
    this.carryLen = 0;
  }

  private fail(reason: string): void {
    this.failed = true;
    this.partial = undefined;
    this.swapSize = 0;
    this.carryLen = 0;
    this.onError(reason);
  }
}
