// A growable big-endian byte writer: messages are appended here and taken as one chunk,
// so a circuit's output for one event-loop tick goes out as a single socket write.

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

  /** Copy out everything written so far and start over (the internal buffer is kept). */
  take(): Uint8Array {
    const out = this.buf.slice(0, this.length);
    this.length = 0;
    if (this.buf.length > 1 << 20) {
      this.buf = new Uint8Array(4096);
      this.view = new DataView(this.buf.buffer);
    }
    return out;
  }
}
