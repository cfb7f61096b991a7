// A PV Access snapshot: many names read at once (search, create, GET INIT, execute) with one
// timer for the batch and every name set up in the first turn; one result per name.
import { performance } from 'node:perf_hooks';
import type { StructureDesc } from '../../pva/types.js';
import type { PvStructure, Typed } from '../../pva/values.js';
import { AbortedError, CaError, ProtocolError, TimeoutError } from '../errors.js';
import { checkTimeout } from '../pending.js';
import type { SnapshotOptions, SnapshotResult, SnapshotSuccess } from '../snapshot.js';
import type { PvaChannel } from './channel.js';
import type { PvaManager } from './manager.js';
import { PvaGet, pvRequestOf, type PvaRequest } from './ops.js';
import { PvaReading } from './reading.js';

/** A success: the reading with the name and the time it took. */
class PvaAnswer extends PvaReading implements SnapshotSuccess<PvaReading> {
  readonly ok = true as const;
  constructor(readonly name: string, readonly elapsedMs: number, type: StructureDesc, raw: PvStructure) {
    super(type, raw);
  }
  get reading(): PvaReading {
    return this;
  }
  toJSON(): object {
    const v = this.value;
    return {
      name: this.name, ok: true, value: typeof v === 'bigint' ? v.toString() : ArrayBuffer.isView(v) ? Array.from(v as ArrayLike<number>) : v,
      severity: this.severity, status: this.status, timestamp: this.timestamp, elapsedMs: this.elapsedMs,
    };
  }
}

class Item extends PvaGet {
  constructor(private readonly batch: PvaBatch, readonly i: number, ch: PvaChannel, request: Typed) {
    super(ch, request);
  }
  protected get settled(): boolean {
    return this.batch.results[this.i] !== undefined;
  }
  protected succeeded(type: StructureDesc, value: PvStructure): void {
    const b = this.batch;
    b.answer(this.i, new PvaAnswer(b.names[this.i]!, performance.now() - b.t0, type, value));
  }
  protected failed(e: CaError): void {
    this.batch.fail(this.i, e);
  }
}

export interface PvaSnapshotOptions extends SnapshotOptions {
  /** The pvRequest of every read (default "field(value,alarm,timeStamp)"). */
  request?: PvaRequest;
}

class PvaBatch {
  readonly results: Array<SnapshotResult<PvaReading> | undefined>;
  private readonly items: Array<Item | undefined>;
  private remaining: number;
  readonly t0 = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private onAbort: (() => void) | undefined;
  private resolve!: (r: SnapshotResult<PvaReading>[]) => void;
  readonly promise: Promise<SnapshotResult<PvaReading>[]>;

  constructor(private readonly mgr: PvaManager, readonly names: readonly string[], private readonly request: Typed, private readonly signal: AbortSignal | undefined) {
    this.results = new Array(names.length);
    this.items = new Array(names.length);
    this.remaining = names.length;
    this.promise = new Promise((res) => (this.resolve = res));
  }

  start(timeout: number): void {
    const n = this.names.length;
    this.timer = setTimeout(() => {
      // Thousands of names may time out at once: their errors carry no stack (it would only show this timer).
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 0;
      try {
        for (let i = 0; i < n && this.remaining > 0; i++) {
          if (this.results[i]) continue;
          const item = this.items[i];
          this.fail(i, item ? item.ch.timeoutError() : new TimeoutError('not started within the timeout', this.names[i]));
        }
      } finally {
        Error.stackTraceLimit = limit;
      }
    }, timeout);
    const signal = this.signal;
    if (signal) {
      this.onAbort = () => {
        for (let i = 0; i < n && this.remaining > 0; i++) if (!this.results[i]) this.fail(i, new AbortedError(undefined, this.names[i]));
      };
      if (signal.aborted) return this.onAbort();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    this.startAll();
  }

  /**
   * Set every name up at once: each search goes out in the first turns, so the server (whose one
   * TCP thread does the creates, INITs and GETs of a connection in order) starts early and never
   * waits for the client's later names. 10,000 names take 50-150 ms on a loaded 2-core machine.
   */
  private startAll(): void {
    for (let i = 0; i < this.names.length && this.remaining > 0; i++) {
      const name = this.names[i]!;
      let ch: PvaChannel;
      try {
        ch = this.mgr.acquire(name);
      } catch (e) {
        this.fail(i, e instanceof CaError ? e : new ProtocolError(String(e), name));
        continue;
      }
      const item = new Item(this, i, ch, this.request);
      this.items[i] = item;
      item.start();
    }
  }

  answer(i: number, a: PvaAnswer): void {
    if (this.results[i]) return;
    this.results[i] = a;
    if (--this.remaining === 0) this.done();
  }

  fail(i: number, error: CaError): void {
    if (this.results[i]) return;
    this.results[i] = { name: this.names[i]!, ok: false, error, code: error.code, elapsedMs: performance.now() - this.t0 };
    if (--this.remaining === 0) this.done();
  }

  private done(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
    for (const item of this.items) {
      if (!item) continue;
      item.cancel();
      this.mgr.release(item.ch);
    }
    this.resolve(this.results as SnapshotResult<PvaReading>[]);
  }
}

/** Read many names over PV Access at once; one result per name, in input order, never a rejection. */
export function runPvaSnapshot(mgr: PvaManager, names: readonly string[], opts: PvaSnapshotOptions): Promise<SnapshotResult<PvaReading>[]> {
  const timeout = checkTimeout(opts.timeout);
  if (names.length === 0) return Promise.resolve([]);
  const b = new PvaBatch(mgr, names, pvRequestOf(opts.request, 'field(value,alarm,timeStamp)'), opts.signal);
  b.start(timeout);
  return b.promise;
}
