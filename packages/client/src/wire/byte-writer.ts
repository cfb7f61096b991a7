// A growable byte writer: messages are appended here and taken as one chunk, so a circuit's
// output for one event-loop tick goes out as a single socket write (CA's circuit, PVA's Writer).

export class ByteWriter {
  private buf: Uint8Array;
  private view: DataView;
  length = 0;

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

  get dataView(): DataView {
    return this.view;
  }

  get bytes(): Uint8Array {
    return this.buf;
  }

  /** Everything written so far, as bytes of its own; the writer starts over. */
  take(): Uint8Array {
    const n = this.length;
    this.length = 0;
    if (n >= 16384) {
      // Big output (e.g. thousands of requests): hand the buffer over instead of copying it.
      const out = this.buf.subarray(0, n);
      this.buf = new Uint8Array(Math.min(this.buf.length, 1 << 20));
      this.view = new DataView(this.buf.buffer);
      return out;
    }
    return this.buf.slice(0, n);
  }
}
