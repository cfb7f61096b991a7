// A growable byte writer: messages are appended here and taken as one chunk, so a circuit's
// output for one event-loop tick goes out as a single socket write (CA's circuit, PVA's Writer).
// Large payloads may be held by reference instead of copied (`external`), to be written as they
// are: a server's arrays of millions of elements go from the app's memory to the socket.

/** Payloads from this size are held by reference by a writer that takes them so. */
const EXTERNAL_MIN = 1 << 16;

/** The smallest power of two that holds `n` bytes. */
const capacityFor = (n: number): number => 2 ** Math.ceil(Math.log2(n));

export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  /** The bytes written into the buffer (those held by reference not counted). */
  length = 0;
  /** Payloads held by reference: each goes in before the buffer's byte `at`. */
  private externals: { at: number; bytes: Uint8Array }[] = [];

  constructor(initial = 4096) {
    this.buf = new Uint8Array(initial);
    this.view = new DataView(this.buf.buffer);
  }

  /** Make room for `n` more bytes; returns the DataView and the offset to write at. */
  reserve(n: number): number {
    const need = this.length + n;
    if (need > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < need) cap *= 2;
      const nb = new Uint8Array(cap);
      nb.set(this.buf.subarray(0, this.length));
      this.buf = nb;
      this.view = new DataView(nb.buffer);
    }
    const off = this.length;
    this.length = need;
    return off;
  }

  /**
   * Append `b` by reference when it is large (the caller does not change it until it is written);
   * false, with nothing done, when it is small (the caller copies it).
   */
  external(b: Uint8Array): boolean {
    if (b.length < EXTERNAL_MIN) return false;
    this.externals.push({ at: this.length, bytes: b });
    return true;
  }

  /** Bytes held by reference after the buffer's byte `from`: a message's size counts them. */
  externalSince(from: number): number {
    let n = 0;
    for (let i = this.externals.length - 1; i >= 0 && this.externals[i]!.at > from; i--) n += this.externals[i]!.bytes.length;
    return n;
  }

  /** Forget what was written after the buffer's byte `at` (a message that failed to encode). */
  truncate(at: number): void {
    this.length = at;
    while (this.externals.length && this.externals[this.externals.length - 1]!.at > at) this.externals.pop();
  }

  /** Everything written so far as chunks to write in order (held payloads as they are); the writer starts over. */
  takeChunks(): Uint8Array[] {
    if (!this.externals.length) return [this.take()];
    const ext = this.externals;
    this.externals = [];
    const all = this.take();
    const out: Uint8Array[] = [];
    let from = 0;
    for (const e of ext) {
      if (e.at > from) out.push(all.subarray(from, e.at));
      out.push(e.bytes);
      from = e.at;
    }
    if (all.length > from) out.push(all.subarray(from));
    return out;
  }

  get dataView(): DataView {
    return this.view;
  }

  get bytes(): Uint8Array {
    return this.buf;
  }

  /** Everything written so far, as bytes of its own; the writer starts over. */
  take(): Uint8Array {
    if (this.externals.length) {
      const chunks = this.takeChunks();
      const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let o = 0;
      for (const c of chunks) {
        out.set(c, o);
        o += c.length;
      }
      return out;
    }
    const n = this.length;
    this.length = 0;
    if (n >= 16384) {
      // Big output (e.g. thousands of requests): hand the buffer over instead of copying it. The
      // next buffer is as big as this output, not as the buffer: after 100,000 monitors were set
      // up, a megabyte made again for every 20 KB of their acks, several a second: each one
      // zeroed, and counted by V8 as external memory, whose growth starts full collections.
      const out = this.buf.subarray(0, n);
      this.buf = new Uint8Array(Math.min(capacityFor(n), 1 << 20));
      this.view = new DataView(this.buf.buffer);
      return out;
    }
    return this.buf.slice(0, n);
  }
}
