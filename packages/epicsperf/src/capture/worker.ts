// The capture writer in a worker thread: the thread that receives updates buffers them per PV and
// hands the blocks over (transferred, not copied) each flush period, so a slow disk or a long HDF5
// flush never stops it reading the network. ThreadedWriter is its side; the rest runs in the worker.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { resolve } from 'node:path';
import {
  CaptureError,
  CaptureWriter,
  type CaptureOpenOptions,
  type CaptureUpdate,
  type ColumnBlock,
  type FlushStats,
  type PvMeta,
} from './writer.js';
import { Column, ELEMENT_TYPES, type NumericArray, type NumericArrayCtor } from './columns.js';
import type { GapRecord } from './gaps.js';

type ToWorker =
  | { op: 'add'; name: string; meta: PvMeta }
  | { op: 'flush'; blocks: [number, ColumnBlock][] }
  | { op: 'close'; blocks: [number, ColumnBlock][] };
type FromWorker =
  | { op: 'opened' }
  | { op: 'flushed'; stats: FlushStats; returned: [number, NumericArray[]][] }
  | { op: 'closed' }
  | { op: 'error'; message: string; code?: string };

interface Buffers {
  layout: 'scalar' | 'fixed' | 'varying';
  count: number;
  ctor: NumericArrayCtor;
  value: Column<NumericArray>;
  length: Column<Uint32Array>;
  timestamp: Column<Float64Array>;
  received: Column<Float64Array>;
  severity: Column<Uint8Array>;
  status: Column<Uint16Array>;
  gaps: Column<Float64Array>;
  rows: number;
  /** Value memory the worker handed back after writing it: the next period fills it. */
  spare: NumericArray | undefined;
}

/** The part of CaptureWriter a capture session uses, with the HDF5 work in a worker thread. */
export class ThreadedWriter {
  private readonly pvs: Buffers[] = [];
  private pending: ((m: FromWorker) => void)[] = [];
  private failure: Error | undefined;

  private constructor(
    readonly path: string,
    private readonly worker: Worker,
  ) {
    worker.on('message', (m: FromWorker) => {
      if (m.op === 'error') this.failure = new CaptureError((m.code ?? 'ERR_EPICSPERF_CAPTURE_UNWRITABLE') as never, m.message);
      this.pending.shift()?.(m);
    });
    worker.on('error', (err) => {
      this.failure = err;
      for (const p of this.pending.splice(0)) p({ op: 'error', message: err.message });
    });
  }

  static async open(path: string, opts: CaptureOpenOptions): Promise<ThreadedWriter> {
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { path, opts } });
    const w = new ThreadedWriter(resolve(path), worker);
    const m = await w.reply();
    if (m.op === 'error') {
      await worker.terminate();
      throw new CaptureError((m.code ?? 'ERR_EPICSPERF_CAPTURE_UNWRITABLE') as never, m.message);
    }
    return w;
  }

  private reply(): Promise<FromWorker> {
    return new Promise((resolve) => this.pending.push(resolve));
  }

  addPv(name: string, meta: PvMeta): number {
    const layout = meta.varying ? 'varying' : meta.count === 1 ? 'scalar' : 'fixed';
    const ctor = ELEMENT_TYPES[meta.nativeType].ctor;
    this.pvs.push({
      layout,
      count: meta.count,
      ctor,
      value: new Column<NumericArray>(ctor as never, layout === 'scalar' ? 64 : meta.count),
      length: new Column(Uint32Array),
      timestamp: new Column(Float64Array),
      received: new Column(Float64Array),
      severity: new Column(Uint8Array),
      status: new Column(Uint16Array),
      gaps: new Column(Float64Array),
      rows: 0,
      spare: undefined,
    });
    this.worker.postMessage({ op: 'add', name, meta } satisfies ToWorker);
    return this.pvs.length - 1;
  }

  /** Buffer one update; returns its row. */
  append(pv: number, u: CaptureUpdate): number {
    const b = this.pvs[pv]!;
    const v = u.value;
    if (b.layout === 'scalar') b.value.push(typeof v === 'number' ? v : (v[0] ?? Number.NaN));
    else {
      const arr: ArrayLike<number> = typeof v === 'number' ? [v] : v;
      b.value.pushAll(arr);
      if (b.layout === 'varying') b.length.push(arr.length);
    }
    b.timestamp.push(u.timestamp);
    b.received.push(u.received);
    b.severity.push(u.severity);
    b.status.push(u.status);
    return b.rows + b.timestamp.length - 1;
  }

  appendGap(pv: number, g: GapRecord): void {
    this.pvs[pv]!.gaps.pushAll([g.index, g.before, g.after, g.lost]);
  }

  /** The buffered blocks and the memory to transfer with them; the buffers start again empty. */
  private take(): { blocks: [number, ColumnBlock][]; transfer: ArrayBuffer[] } {
    const blocks: [number, ColumnBlock][] = [];
    const transfer: ArrayBuffer[] = [];
    // each column's memory is handed over (its parts transferred, each with its filled part as
    // the view) and the column starts again on other memory: no copy. The values' memory comes
    // back once written (flush()), so a capture of large arrays refills the same memory instead
    // of mapping new memory every period.
    const own = <T extends NumericArray>(c: Column<T>, next?: T): T[] => {
      const parts = c.detach(next);
      for (const p of parts) transfer.push(p.buffer as ArrayBuffer);
      return parts;
    };
    this.pvs.forEach((b, i) => {
      if (b.timestamp.length === 0 && b.gaps.length === 0) return;
      const spare = b.spare;
      b.spare = undefined;
      const rows = b.timestamp.length;
      blocks.push([
        i,
        {
          value: own(b.value, spare),
          ...(b.layout === 'varying' && { length: own(b.length) }),
          timestamp: own(b.timestamp),
          received: own(b.received),
          severity: own(b.severity),
          status: own(b.status),
          gaps: own(b.gaps),
        },
      ]);
      b.rows += rows;
    });
    return { blocks, transfer };
  }

  /** Hand the buffered blocks to the worker, which writes and flushes them; resolves when it has. */
  async flush(): Promise<FlushStats> {
    if (this.failure) throw this.failure;
    const { blocks, transfer } = this.take();
    this.worker.postMessage({ op: 'flush', blocks } satisfies ToWorker, transfer);
    const m = await this.reply();
    if (m.op === 'error') throw new CaptureError((m.code ?? 'ERR_EPICSPERF_CAPTURE_UNWRITABLE') as never, m.message);
    const { stats, returned } = m as Extract<FromWorker, { op: 'flushed' }>;
    // the largest part of each PV's values is the next period's memory
    for (const [pv, parts] of returned) {
      const b = this.pvs[pv]!;
      const largest = parts.reduce<ArrayBuffer | undefined>(
        (a, p) => (!a || p.buffer.byteLength > a.byteLength ? (p.buffer as ArrayBuffer) : a),
        undefined,
      );
      if (largest) b.spare = new b.ctor(largest);
    }
    return stats;
  }

  /** Write what is buffered, flush and close the file, and end the worker. */
  async close(): Promise<void> {
    const { blocks, transfer } = this.failure ? { blocks: [], transfer: [] } : this.take();
    this.worker.postMessage({ op: 'close', blocks } satisfies ToWorker, transfer);
    const m = await this.reply();
    await this.worker.terminate();
    if (m.op === 'error') throw new CaptureError((m.code ?? 'ERR_EPICSPERF_CAPTURE_UNWRITABLE') as never, m.message);
  }
}

async function workerMain(): Promise<void> {
  const port = parentPort!;
  const send = (m: FromWorker) => port.postMessage(m);
  const { path, opts } = workerData as { path: string; opts: CaptureOpenOptions };
  let w: CaptureWriter;
  try {
    w = await CaptureWriter.open(path, opts);
  } catch (err) {
    send({ op: 'error', message: (err as Error).message, ...(err instanceof CaptureError && { code: err.code }) });
    return;
  }
  send({ op: 'opened' });
  port.on('message', (m: ToWorker) => {
    try {
      if (m.op === 'add') w.addPv(m.name, m.meta);
      else {
        for (const [pv, block] of m.blocks) w.appendColumns(pv, block);
        if (m.op === 'flush') {
          const stats = w.flush();
          // the writer let go of the values it wrote (Column.adopt): their memory goes back
          const returned = m.blocks.map(([pv, b]): [number, NumericArray[]] => [pv, b.value]);
          port.postMessage(
            { op: 'flushed', stats, returned } satisfies FromWorker,
            returned.flatMap(([, v]) => v.map((p) => p.buffer as ArrayBuffer)),
          );
        } else {
          w.close();
          send({ op: 'closed' });
        }
      }
    } catch (err) {
      send({ op: 'error', message: (err as Error).message.split('\n')[0] ?? 'write failed' });
    }
  });
}

if (!isMainThread && (workerData as { path?: unknown } | null)?.path !== undefined) void workerMain();
