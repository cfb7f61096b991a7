// The memory of large messages handed back by their consumer (a monitor with reuseArrays whose
// callback has returned), kept for the next large message of the same connection: CA and PVA.

/** Buffers from this size up are kept when handed back. */
export const POOLED_MIN = 1 << 20;

export class BufferPool {
  /** The newest buffers handed back: one of a size no message has any more ages out. */
  private readonly free: ArrayBuffer[] = [];

  constructor(private readonly keep = 2) {}

  /** At least `size` bytes (not zeroed): a buffer handed back if one fits (at most twice the size), else new. */
  take(size: number): ArrayBuffer {
    const free = this.free;
    for (let i = 0; i < free.length; i++) {
      const b = free[i]!;
      if (b.byteLength >= size && b.byteLength <= size * 2) {
        free.splice(i, 1);
        return b;
      }
    }
    // Not zero-filled: every byte a reader looks at is overwritten by the message first.
    return Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer;
  }

  /** A buffer nobody views any more. */
  give(buffer: ArrayBuffer): void {
    if (buffer.byteLength < POOLED_MIN || this.free.includes(buffer)) return;
    if (this.free.push(buffer) > this.keep) this.free.shift();
  }
}
