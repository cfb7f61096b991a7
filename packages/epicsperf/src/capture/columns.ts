// The capture file's element types (CA native type -> HDF5 dtype and typed array) and the
// growable per-PV column buffers that hold updates between two flushes.

/** CA native types a capture stores (DBR_STRING is not captured yet). */
export type NativeType = 'char' | 'short' | 'enum' | 'long' | 'float' | 'double';

export const NATIVE_TYPES: readonly NativeType[] = ['char', 'short', 'enum', 'long', 'float', 'double'];

export type NumericArray = Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;
export type NumericArrayCtor = {
  new (n: number): NumericArray;
  new (memory: ArrayBuffer): NumericArray;
  readonly BYTES_PER_ELEMENT: number;
};

export interface ElementType {
  /** h5wasm dtype string (little-endian). */
  dtype: string;
  /** The numpy name of the same type, as the format document gives it. */
  numpy: string;
  ctor: NumericArrayCtor;
}

/** The dataset element type of each native type (docs/capture-format.md, "Types"). */
export const ELEMENT_TYPES: Readonly<Record<NativeType, ElementType>> = {
  char: { dtype: '<B', numpy: 'uint8', ctor: Uint8Array },
  short: { dtype: '<h', numpy: 'int16', ctor: Int16Array },
  enum: { dtype: '<H', numpy: 'uint16', ctor: Uint16Array },
  long: { dtype: '<i', numpy: 'int32', ctor: Int32Array },
  float: { dtype: '<f', numpy: 'float32', ctor: Float32Array },
  double: { dtype: '<d', numpy: 'float64', ctor: Float64Array },
};

/**
 * A growable run of numbers held as a list of typed arrays (parts): growing opens a new part,
 * twice the size of the last, and never copies what is already in. `parts()` is the filled
 * memory in order; `clear()` keeps the last part's memory (unless the column adopted it:
 * adopted memory is let go of at clear()).
 */
export class Column<T extends NumericArray> {
  /** Filled parts before the current one. */
  private full: T[] = [];
  private buf: T;
  /** Elements filled in buf. */
  private used = 0;
  private adopted = false;
  length = 0;

  constructor(
    private readonly ctor: { new (n: number): T },
    initial = 64,
  ) {
    this.buf = new ctor(initial);
  }

  private reserve(extra: number): void {
    if (this.used + extra <= this.buf.length) return;
    if (this.used > 0) this.full.push(this.buf.subarray(0, this.used) as T);
    this.buf = new this.ctor(Math.max(extra, this.used > 0 ? this.buf.length * 2 : this.buf.length));
    this.used = 0;
    this.adopted = false;
  }

  push(v: number): void {
    this.reserve(1);
    this.buf[this.used++] = v;
    this.length++;
  }

  /** Append many values; a plain number array or any typed array (converted element by element). */
  pushAll(values: ArrayLike<number>): void {
    const n = values.length;
    this.reserve(n);
    if (ArrayBuffer.isView(values)) this.buf.set(values as never, this.used);
    else for (let i = 0; i < n; i++) this.buf[this.used + i] = values[i]!;
    this.used += n;
    this.length += n;
  }

  /**
   * Take `parts` as the column's contents without copying, when the column is empty; the
   * column lets go of them at clear(), so their owner may reuse them after that.
   */
  adopt(parts: readonly T[]): void {
    if (this.length > 0) {
      for (const p of parts) this.pushAll(p);
      return;
    }
    const filled = parts.filter((p) => p.length > 0);
    const last = filled.pop();
    if (!last) return;
    this.full = filled;
    this.buf = last;
    this.used = last.length;
    this.length = filled.reduce((a, p) => a + p.length, last.length);
    this.adopted = true;
  }

  /**
   * The filled parts, handed over: the column starts again on `next` (memory handed back from an
   * earlier detach, already mapped) or on new memory.
   */
  detach(next?: T): T[] {
    const out = this.parts();
    // new memory is sized for a period like the last one, with room for a quarter more
    this.buf = next ?? new this.ctor(Math.max(64, Math.ceil(this.length * 1.25)));
    this.full = [];
    this.used = 0;
    this.length = 0;
    return out;
  }

  /** The filled memory, in order (no part is empty; none at all when the column is). */
  parts(): T[] {
    return this.used > 0 ? [...this.full, this.buf.subarray(0, this.used) as T] : [...this.full];
  }

  get bytes(): number {
    return this.length * this.buf.BYTES_PER_ELEMENT;
  }

  clear(): void {
    this.full = [];
    this.used = 0;
    this.length = 0;
    // a burst can leave a huge buffer behind: give back memory above 16 MiB
    if (this.adopted || this.buf.byteLength > 16 * 1024 * 1024) this.buf = new this.ctor(64);
    this.adopted = false;
  }
}

/** A PV name as an HDF5 link name: `%` -> `%25`, `/` -> `%2F`, and `.` alone -> `%2E`. */
export function groupName(pv: string): string {
  if (pv === '.') return '%2E';
  return pv.replace(/%/g, '%25').replace(/\//g, '%2F');
}
