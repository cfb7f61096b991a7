// CaptureWriter: the HDF5 capture file of docs/capture-format.md, written with h5wasm. Updates
// wait in per-PV buffers; flush() writes each buffer as one block and puts the file on disk.
import { closeSync, fstatSync, openSync, type PathLike } from 'node:fs';
import { resolve } from 'node:path';
import * as h5wasm from 'h5wasm/node';
import { Column, ELEMENT_TYPES, NATIVE_TYPES, groupName, type NativeType, type NumericArray } from './columns.js';
import type { GapRecord } from './gaps.js';
import { OrderedWrites } from './ordered.js';
import { appendBlock, extendable, keepOpen, type Dataset, type H5File } from './h5calls.js';

export const FORMAT_NAME = 'epicsperf-capture';
export const FORMAT_VERSION = 1;
/** Rows per chunk of the one-row-per-update datasets (timestamp, received, ...). */
const ROW_CHUNK = 1024;
/** Target chunk size of the `value` datasets of arrays. */
const ARRAY_CHUNK_BYTES = 512 * 1024;

export class CaptureError extends Error {
  constructor(
    readonly code:
      | 'ERR_EPICSPERF_CAPTURE_EXISTS'
      | 'ERR_EPICSPERF_CAPTURE_UNWRITABLE'
      | 'ERR_EPICSPERF_CAPTURE_USAGE'
      | 'ERR_EPICSPERF_CAPTURE_CLOSED',
    message: string,
  ) {
    super(message);
    this.name = 'CaptureError';
  }
}

export interface PvMeta {
  nativeType: NativeType;
  /** Element count of the channel (1 = scalar). */
  count: number;
  /** The length of the array may change from update to update: store it in the varying layout. */
  varying?: boolean;
  units?: string;
  precision?: number;
  enumStrings?: readonly string[];
}

export interface CaptureUpdate {
  value: number | ArrayLike<number>;
  /** IOC time, POSIX seconds. */
  timestamp: number;
  /** Client time of arrival, POSIX seconds. */
  received: number;
  severity: number;
  status: number;
}

/** Many updates of one PV as columns (appendColumns), each a list of parts in order (Column.detach()). */
export interface ColumnBlock {
  value: NumericArray[];
  length?: Uint32Array[];
  timestamp: Float64Array[];
  received: Float64Array[];
  severity: Uint8Array[];
  status: Uint16Array[];
  /** Gap records, 4 numbers each. */
  gaps: Float64Array[];
}

export interface CaptureOpenOptions {
  /** Replace an existing file. */
  force?: boolean;
  /** fsync after each flush (default true): the bytes survive a crash of the machine, not only of the process. */
  fsync?: boolean;
  /** File attributes: the tool version, the options of the run and its environment (stored as JSON). */
  toolVersion?: string;
  options?: unknown;
  environment?: unknown;
}

export interface FlushStats {
  /** Updates written by this flush, all PVs. */
  updates: number;
  /** Bytes of data handed to HDF5 (values and per-update columns). */
  bytes: number;
  ms: number;
}

type Layout = 'scalar' | 'fixed' | 'varying';

interface PvState {
  path: string;
  meta: PvMeta;
  layout: Layout;
  value: Column<NumericArray>;
  length: Column<Uint32Array>; // varying: elements of each update
  timestamp: Column<Float64Array>;
  received: Column<Float64Array>;
  severity: Column<Uint8Array>;
  status: Column<Uint16Array>;
  gaps: Column<Float64Array>; // 4 numbers per gap
  /** Rows (updates) and, for `varying`, elements already in the file. */
  rows: number;
  elements: number;
  gapRows: number;
  datasets: Map<string, Dataset>;
}

export class CaptureWriter {
  private readonly pvs: PvState[] = [];
  private readonly names = new Set<string>();
  private closed = false;
  /** A flush failed: HDF5's view of the file is ahead of the disk's, so nothing more is written. */
  private broken = false;
  private readonly ordered: OrderedWrites;

  private constructor(
    readonly path: string,
    private readonly file: H5File,
    private readonly fd: number,
    private readonly fsync: boolean,
  ) {
    this.ordered = OrderedWrites.forPath(path);
  }

  /**
   * Create the capture file. An existing file is refused unless `force`; an unwritable path
   * throws a CaptureError before anything is written.
   */
  static async open(path: string, opts: CaptureOpenOptions = {}): Promise<CaptureWriter> {
    const abs = resolve(path);
    const fd = openOrExplain(abs, opts.force === true);
    let file: H5File;
    try {
      await h5wasm.ready;
      // low bound v1.8: readable by HDF5 >= 1.8, and no file-consistency flags that would
      // make a file whose writer was killed refuse to open
      file = new h5wasm.File(abs, 'w', { libver: ['v108', 'v108'] });
    } catch (err) {
      closeSync(fd);
      throw new CaptureError('ERR_EPICSPERF_CAPTURE_UNWRITABLE', `cannot create HDF5 file ${abs}: ${String(err)}`);
    }
    file.create_attribute('format', FORMAT_NAME);
    file.create_attribute('format_version', FORMAT_VERSION, null, '<I');
    file.create_attribute('tool', 'epicsperf');
    file.create_attribute('tool_version', opts.toolVersion ?? '');
    file.create_attribute('created', new Date().toISOString());
    file.create_attribute('options', JSON.stringify(opts.options ?? {}));
    file.create_attribute('environment', JSON.stringify(opts.environment ?? {}));
    file.create_group('pvs');
    const w = new CaptureWriter(abs, file, fd, opts.fsync !== false);
    w.flush();
    return w;
  }

  /** Add a PV; returns its index for append(). Its group exists in the file after the next flush. */
  addPv(name: string, meta: PvMeta): number {
    this.assertOpen();
    if (this.names.has(name)) throw new CaptureError('ERR_EPICSPERF_CAPTURE_USAGE', `PV ${name} was added twice`);
    if (!NATIVE_TYPES.includes(meta.nativeType)) {
      throw new CaptureError('ERR_EPICSPERF_CAPTURE_USAGE', `PV ${name}: native type ${String(meta.nativeType)} cannot be captured`);
    }
    if (!Number.isInteger(meta.count) || meta.count < 1) {
      throw new CaptureError('ERR_EPICSPERF_CAPTURE_USAGE', `PV ${name}: count must be a positive integer, not ${meta.count}`);
    }
    const layout: Layout = meta.varying ? 'varying' : meta.count === 1 ? 'scalar' : 'fixed';
    const et = ELEMENT_TYPES[meta.nativeType];
    const index = this.pvs.length;
    const path = `/pvs/${groupName(name)}`;
    const g = this.file.create_group(path);
    g.create_attribute('name', name);
    g.create_attribute('index', index, null, '<I');
    g.create_attribute('native_type', meta.nativeType);
    g.create_attribute('count', meta.count, null, '<I');
    g.create_attribute('layout', layout);
    if (meta.units !== undefined) g.create_attribute('units', meta.units);
    if (meta.precision !== undefined) g.create_attribute('precision', meta.precision, null, '<h');
    if (meta.enumStrings !== undefined && meta.enumStrings.length > 0) g.create_attribute('enum_strings', [...meta.enumStrings]);

    const rows = (n: string, dtype: string) => extendable(this.file, `${path}/${n}`, dtype, [ROW_CHUNK]);
    const esize = et.ctor.BYTES_PER_ELEMENT;
    if (layout === 'fixed') {
      const chunkRows = Math.max(1, Math.min(ROW_CHUNK, Math.floor(ARRAY_CHUNK_BYTES / (meta.count * esize))));
      extendable(this.file, `${path}/value`, et.dtype, [chunkRows, meta.count]);
    } else if (layout === 'varying') {
      extendable(this.file, `${path}/value`, et.dtype, [Math.max(1, ARRAY_CHUNK_BYTES / esize)]);
      rows('offset', '<Q');
      rows('length', '<I');
    } else {
      rows('value', et.dtype);
    }
    rows('timestamp', '<d');
    rows('received', '<d');
    rows('severity', '<B');
    rows('status', '<H');
    const gaps = extendable(this.file, `${path}/gaps`, '<d', [256, 4]);
    gaps.create_attribute('columns', ['index', 'before', 'after', 'lost']);

    this.pvs.push({
      path,
      meta: { ...meta },
      layout,
      value: new Column<NumericArray>(et.ctor as never, layout === 'scalar' ? 64 : meta.count),
      length: new Column(Uint32Array),
      timestamp: new Column(Float64Array),
      received: new Column(Float64Array),
      severity: new Column(Uint8Array),
      status: new Column(Uint16Array),
      gaps: new Column(Float64Array),
      rows: 0,
      elements: 0,
      gapRows: 0,
      datasets: new Map(),
    });
    this.names.add(name);
    return index;
  }

  /** Buffer one update; returns its row in the PV's datasets. */
  append(pv: number, u: CaptureUpdate): number {
    const s = this.pv(pv);
    const v = u.value;
    if (s.layout === 'scalar') {
      s.value.push(typeof v === 'number' ? v : (v[0] ?? Number.NaN));
    } else {
      const arr: ArrayLike<number> = typeof v === 'number' ? [v] : v;
      if (s.layout === 'fixed' && arr.length !== s.meta.count) {
        throw new CaptureError(
          'ERR_EPICSPERF_CAPTURE_USAGE',
          `PV ${s.path}: an update of ${arr.length} elements for a fixed layout of ${s.meta.count} (add the PV as varying)`,
        );
      }
      s.value.pushAll(arr);
      if (s.layout === 'varying') s.length.push(arr.length);
    }
    s.timestamp.push(u.timestamp);
    s.received.push(u.received);
    s.severity.push(u.severity);
    s.status.push(u.status);
    return s.rows + s.timestamp.length - 1;
  }

  /**
   * Buffer many updates of a PV at once, as columns (the block another thread buffered: see
   * worker.ts). `value` holds every element of the updates, `length` each update's count (varying).
   */
  appendColumns(pv: number, b: ColumnBlock): void {
    const s = this.pv(pv);
    const n = total(b.timestamp);
    if (s.layout === 'fixed' && total(b.value) !== n * s.meta.count) {
      throw new CaptureError('ERR_EPICSPERF_CAPTURE_USAGE', `PV ${s.path}: ${total(b.value)} elements for ${n} updates of ${s.meta.count}`);
    }
    s.value.adopt(b.value);
    const add = <T extends NumericArray>(c: Column<T>, parts: readonly T[] | undefined) => parts?.forEach((p) => c.pushAll(p));
    if (s.layout === 'varying') add(s.length, b.length);
    add(s.timestamp, b.timestamp);
    add(s.received, b.received);
    add(s.severity, b.severity);
    add(s.status, b.status);
    add(s.gaps, b.gaps);
  }

  /** Buffer one gap record of a PV (see gaps.ts). */
  appendGap(pv: number, g: GapRecord): void {
    const s = this.pv(pv);
    s.gaps.pushAll([g.index, g.before, g.after, g.lost]);
  }

  /** Updates of a PV so far: in the file and buffered. */
  updates(pv: number): number {
    const s = this.pv(pv);
    return s.rows + s.timestamp.length;
  }

  /** Bytes waiting for the next flush. */
  get pendingBytes(): number {
    let n = 0;
    for (const s of this.pvs) n += s.value.bytes + s.timestamp.length * 29 + s.gaps.bytes;
    return n;
  }

  /**
   * Write every PV's buffer as one block, flush the HDF5 file and (by default) fsync it. HDF5's
   * writes reach the disk in a safe order (ordered.ts). A failed flush leaves the file as the
   * previous one left it, and the writer refuses further writes.
   */
  flush(): FlushStats {
    this.assertOpen();
    if (this.broken) throw new CaptureError('ERR_EPICSPERF_CAPTURE_CLOSED', `capture file ${this.path}: an earlier write failed`);
    const t0 = performance.now();
    this.ordered.begin(fstatSync(this.fd).size);
    try {
      const r = this.writeBlocks();
      if (h5wasm.Module.flush(this.file.file_id) < 0) throw this.ordered.failure ?? new Error(`cannot flush ${this.path}`);
      this.ordered.commit(this.fd, this.fsync);
      return { ...r, ms: performance.now() - t0 };
    } catch (err) {
      const cause = this.ordered.failure ?? err;
      this.ordered.restore();
      this.broken = true;
      throw cause;
    }
  }

  private writeBlocks(): { updates: number; bytes: number } {
    let updates = 0;
    let bytes = 0;
    for (const s of this.pvs) {
      const n = s.timestamp.length;
      const r0 = s.rows;
      const r1 = r0 + n;
      if (n > 0) {
        if (s.layout === 'varying') {
          const e0 = s.elements;
          const e1 = e0 + s.value.length;
          if (e1 > e0) appendBlock(this.ds(s, 'value'), [e1], [[e0, e1]], s.value.parts());
          const offsets = new BigUint64Array(n);
          const lengths = s.length.parts();
          let off = e0;
          let i = 0;
          for (const part of lengths) {
            for (const len of part) {
              offsets[i++] = BigInt(off);
              off += len;
            }
          }
          appendBlock(this.ds(s, 'offset'), [r1], [[r0, r1]], offsets);
          appendBlock(this.ds(s, 'length'), [r1], [[r0, r1]], lengths);
          s.elements = e1;
          bytes += n * 12;
        } else if (s.layout === 'fixed') {
          appendBlock(
            this.ds(s, 'value'),
            [r1, s.meta.count],
            [
              [r0, r1],
              [0, s.meta.count],
            ],
            s.value.parts(),
          );
        } else {
          appendBlock(this.ds(s, 'value'), [r1], [[r0, r1]], s.value.parts());
        }
        bytes += s.value.bytes + n * 19;
        appendBlock(this.ds(s, 'timestamp'), [r1], [[r0, r1]], s.timestamp.parts());
        appendBlock(this.ds(s, 'received'), [r1], [[r0, r1]], s.received.parts());
        appendBlock(this.ds(s, 'severity'), [r1], [[r0, r1]], s.severity.parts());
        appendBlock(this.ds(s, 'status'), [r1], [[r0, r1]], s.status.parts());
        s.rows = r1;
        updates += n;
        for (const c of [s.value, s.length, s.timestamp, s.received, s.severity, s.status]) c.clear();
      }
      const g = s.gaps.length / 4;
      if (g > 0) {
        const g1 = s.gapRows + g;
        appendBlock(
          this.ds(s, 'gaps'),
          [g1, 4],
          [
            [s.gapRows, g1],
            [0, 4],
          ],
          s.gaps.parts(),
        );
        s.gapRows = g1;
        s.gaps.clear();
      }
    }
    return { updates, bytes };
  }

  /**
   * Flush what is buffered and close the file. Safe to call twice. After a failed write, what
   * HDF5 would still write on closing is dropped: the file stays as the last good flush left it.
   */
  close(): void {
    if (this.closed) return;
    try {
      if (!this.broken) this.flush();
    } finally {
      this.closed = true;
      try {
        this.ordered.begin(fstatSync(this.fd).size);
        this.file.close();
        if (!this.broken) this.ordered.commit(this.fd, this.fsync);
      } finally {
        this.ordered.restore();
        closeSync(this.fd);
      }
    }
  }

  private pv(index: number): PvState {
    this.assertOpen();
    const s = this.pvs[index];
    if (!s) throw new CaptureError('ERR_EPICSPERF_CAPTURE_USAGE', `no PV with index ${index}`);
    return s;
  }

  private ds(s: PvState, name: string): Dataset {
    let d = s.datasets.get(name);
    if (!d) {
      d = this.file.get(`${s.path}/${name}`) as Dataset;
      keepOpen(d);
      s.datasets.set(name, d);
    }
    return d;
  }

  private assertOpen(): void {
    if (this.closed) throw new CaptureError('ERR_EPICSPERF_CAPTURE_CLOSED', `capture file ${this.path} is closed`);
  }
}

/**
 * Create (or truncate) the file with node:fs first, so a path that cannot be written is a
 * clear error before HDF5 touches it; the descriptor stays open for fsync.
 */
function openOrExplain(path: PathLike, force: boolean): number {
  try {
    return openSync(path, force ? 'w' : 'wx');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EEXIST') {
      throw new CaptureError('ERR_EPICSPERF_CAPTURE_EXISTS', `${String(path)} exists (use --force to replace it)`);
    }
    throw new CaptureError('ERR_EPICSPERF_CAPTURE_UNWRITABLE', `cannot write ${String(path)}: ${e.code ?? ''} ${e.message}`.trim());
  }
}

/** Elements in all parts. */
function total(parts: readonly ArrayLike<number>[]): number {
  return parts.reduce((a, p) => a + p.length, 0);
}
