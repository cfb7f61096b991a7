// Ordered flushes: while the capture writer flushes, HDF5's writes to the file are held in memory
// and then put on disk new space first, then the superblock, the in-place updates, and the object
// headers last, so a process killed during a flush leaves every dataset as the previous flush or
// this one left it (docs/capture-format.md, "Writing").
import fs from 'node:fs';

interface Pending {
  pos: number;
  data: Buffer;
}

const PAGE = 64 * 1024;

/**
 * Holds the writes HDF5 makes into the existing part of one file (recognised by its device and
 * inode) between begin() and commit(); writes beyond its old end go out at once, as nothing
 * points there until the held ones land. Reads of that file see the held writes. h5wasm reaches the file through Node's
 * `fs` (Emscripten's NODERAWFS), whose writeSync and readSync are wrapped for that time only.
 */
export class OrderedWrites {
  private pending: Pending[] = [];
  private pages = new Map<number, number[]>();
  private readonly fds = new Map<number, boolean>();
  private oldSize = 0;
  private active = false;
  private freshWritten = false;
  /** The first write that failed during this flush (a full disk, a file-size limit). */
  failure: Error | undefined;
  private readonly origWrite = fs.writeSync;
  private readonly origRead = fs.readSync;

  constructor(
    private readonly dev: number,
    private readonly ino: number,
  ) {}

  static forPath(path: string): OrderedWrites {
    const st = fs.statSync(path);
    return new OrderedWrites(st.dev, st.ino);
  }

  private ours(fd: number): boolean {
    let v = this.fds.get(fd);
    if (v === undefined) {
      try {
        const st = fs.fstatSync(fd);
        v = st.dev === this.dev && st.ino === this.ino;
      } catch {
        v = false;
      }
      this.fds.set(fd, v);
    }
    return v;
  }

  /** Start holding writes; `size` is the file's size now (the end of what the last flush wrote). */
  begin(size: number): void {
    this.oldSize = size;
    this.freshWritten = false;
    this.failure = undefined;
    this.pending = [];
    this.pages.clear();
    this.fds.clear();
    this.active = true;
    (fs as { writeSync: unknown }).writeSync = ((
      fd: number,
      buffer: unknown,
      offset?: unknown,
      length?: unknown,
      position?: unknown,
    ): number => {
      if (
        this.active &&
        typeof position === 'number' &&
        ArrayBuffer.isView(buffer) &&
        typeof offset === 'number' &&
        typeof length === 'number' &&
        this.ours(fd)
      ) {
        // beyond the old end of the file nothing points yet: written now, in order (no copy)
        if (position >= this.oldSize) {
          this.freshWritten = true;
          try {
            return (this.origWrite as (...a: unknown[]) => number)(fd, buffer, offset, length, position);
          } catch (err) {
            this.failure ??= err as Error; // HDF5 sees it too, but may not say so
            throw err;
          }
        }
        const view = buffer as Uint8Array;
        const copy = Buffer.allocUnsafe(length);
        copy.set(new Uint8Array(view.buffer, view.byteOffset + offset, length));
        this.hold(position, copy);
        return length;
      }
      return (this.origWrite as (...a: unknown[]) => number)(fd, buffer, offset, length, position);
    }) as typeof fs.writeSync;
    (fs as { readSync: unknown }).readSync = ((
      fd: number,
      buffer: unknown,
      offset?: unknown,
      length?: unknown,
      position?: unknown,
    ): number => {
      const n = (this.origRead as (...a: unknown[]) => number)(fd, buffer, offset, length, position);
      if (
        this.active &&
        typeof position === 'number' &&
        typeof offset === 'number' &&
        typeof length === 'number' &&
        ArrayBuffer.isView(buffer) &&
        this.ours(fd)
      ) {
        return this.overlay(buffer as Uint8Array, offset, length, position, n);
      }
      return n;
    }) as typeof fs.readSync;
  }

  private hold(pos: number, data: Buffer): void {
    const i = this.pending.length;
    this.pending.push({ pos, data });
    for (let p = Math.floor(pos / PAGE); p <= Math.floor((pos + Math.max(0, data.length - 1)) / PAGE); p++) {
      let list = this.pages.get(p);
      if (!list) this.pages.set(p, (list = []));
      list.push(i);
    }
  }

  /** Lay the held writes that overlap a read over what the disk gave; the bytes now readable. */
  private overlay(buf: Uint8Array, offset: number, length: number, position: number, n: number): number {
    const hits = new Set<number>();
    for (let p = Math.floor(position / PAGE); p <= Math.floor((position + Math.max(0, length - 1)) / PAGE); p++) {
      for (const i of this.pages.get(p) ?? []) hits.add(i);
    }
    let end = position + n;
    for (const i of [...hits].sort((a, b) => a - b)) {
      const w = this.pending[i]!;
      const a = Math.max(w.pos, position);
      const b = Math.min(w.pos + w.data.length, position + length);
      if (a >= b) continue;
      buf.set(w.data.subarray(a - w.pos, b - w.pos), offset + (a - position));
      end = Math.max(end, b);
    }
    return end - position;
  }

  /**
   * Put the held writes on the file `fd` (the writes beyond the old end of the file went out as
   * they came): fsync, then the superblock (offset 0), the other in-place writes in their order,
   * the object headers, fsync.
   */
  commit(fd: number, fsync: boolean): void {
    this.restore();
    if (this.failure) throw this.failure; // the new space is not all there: keep the old state
    const write = (w: Pending) => {
      for (let off = 0; off < w.data.length; )
        off += (this.origWrite as (...a: unknown[]) => number)(fd, w.data, off, w.data.length - off, w.pos + off);
    };
    // everything beyond the old end was written during the flush; only in-place writes were held
    const inPlace = this.pending;
    if (fsync && this.freshWritten) fs.fsyncSync(fd);
    // the superblock (its end-of-file address now covers the new space), then the chunk indexes
    // and chunks updated in place, then the object headers, whose dataspaces make the new rows visible
    const header = (w: Pending) =>
      w.data.length >= 4 && (w.data.toString('latin1', 0, 4) === 'OHDR' || w.data.toString('latin1', 0, 4) === 'OCHK');
    for (const w of inPlace) if (w.pos === 0) write(w);
    for (const w of inPlace) if (w.pos !== 0 && !header(w)) write(w);
    for (const w of inPlace) if (w.pos !== 0 && header(w)) write(w);
    if (fsync) fs.fsyncSync(fd);
    this.pending = [];
    this.pages.clear();
  }

  /** Stop holding (commit() does it; call it alone when the flush failed). */
  restore(): void {
    this.active = false;
    (fs as { writeSync: unknown }).writeSync = this.origWrite;
    (fs as { readSync: unknown }).readSync = this.origRead;
  }
}
