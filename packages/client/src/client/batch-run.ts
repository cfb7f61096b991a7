// What every snapshot does whatever its protocol: one result per name in input order, never a
// rejection; one deadline for the batch counted from the start (kept by a timer, and by each
// answer when the event loop is too busy for the timer to fire on time); the abort signal; names
// set up a slice per event-loop turn (with the searcher held to full datagrams meanwhile, where it can).
import { performance } from 'node:perf_hooks';
import { onAbort } from './abort.js';
import { AbortedError, EpicsError, ProtocolError, TimeoutError } from './errors.js';
import type { SnapshotResult } from './snapshot.js';

/** One name's read in the batch. */
export interface BatchItem {
  readonly ch: { timeoutError(): EpicsError };
  start(): void;
  cancel(): void;
}

/** What the batch needs of the channel manager. */
export interface BatchManager<Ch> {
  acquire(name: string): Ch;
  release(ch: Ch): void;
  /** Many acquire() calls follow over several event-loop turns (CA: send only full search datagrams). */
  corkSearch?(): void;
  uncorkSearch?(): void;
}

/** Names set up per event-loop turn when a snapshot starts. */
const START_SLICE = 256;

export abstract class BatchRun<R extends { readonly value: unknown }, Ch, I extends BatchItem> {
  readonly results: Array<SnapshotResult<R> | undefined>;
  private readonly items: Array<I | undefined>;
  private remaining: number;
  readonly t0 = performance.now();
  /** The batch's timeout (ms from t0). */
  private timeoutMs = Infinity;
  private timer: NodeJS.Timeout | undefined;
  /** Names acquired so far (they are set up a slice per event-loop turn). */
  private started = 0;
  /** Whether this batch holds the searcher to full datagrams while it sets names up. */
  private corked = false;
  private unwatch: (() => void) | undefined;
  private resolve!: (r: SnapshotResult<R>[]) => void;
  readonly promise: Promise<SnapshotResult<R>[]>;

  /** `startSlice`: names set up per event-loop turn (Infinity: all in the first turn). */
  constructor(
    protected readonly mgr: BatchManager<Ch>,
    readonly names: readonly string[],
    private readonly signal: AbortSignal | undefined,
    private readonly startSlice = START_SLICE,
  ) {
    const n = names.length;
    this.results = new Array(n);
    this.items = new Array(n);
    this.remaining = n;
    this.promise = new Promise((res) => (this.resolve = res));
  }

  /** The read of name `i` on its channel. */
  protected abstract item(i: number, ch: Ch): I;

  start(timeout: number): void {
    const { mgr, names } = this;
    const n = names.length;
    // One deadline for the batch, counted from the start (setting up 10,000 names takes time too).
    this.timeoutMs = timeout;
    this.timer = setTimeout(() => this.expire(), timeout);
    const signal = this.signal;
    if (signal) {
      const abort = (): void => {
        for (let i = 0; i < n && this.remaining > 0; i++) if (!this.results[i]) this.fail(i, new AbortedError(undefined, names[i]));
      };
      if (signal.aborted) return abort();
      this.unwatch = onAbort(signal, abort);
    }
    if (n > this.startSlice && mgr.corkSearch) {
      mgr.corkSearch();
      this.corked = true;
    }
    this.startSome();
  }

  /**
   * Acquire the next slice of names and send what it needs, then let the event loop run before
   * the next slice: the server's answers to the first names are handled (and its next requests
   * sent) while later names are still being set up, so client and server work side by side.
   */
  private startSome(): void {
    const { mgr, names, items } = this;
    const end = Math.min(names.length, this.started + this.startSlice);
    for (let i = this.started; i < end && this.remaining > 0; i++) {
      const name = names[i]!;
      let ch: Ch;
      try {
        ch = mgr.acquire(name);
      } catch (e) {
        this.fail(i, e instanceof EpicsError ? e : new ProtocolError(String(e), name));
        continue;
      }
      const item = this.item(i, ch);
      items[i] = item;
      item.start();
    }
    this.started = end;
    if (end < names.length && this.remaining > 0) setImmediate(() => this.startSome());
    else this.uncork();
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.mgr.uncorkSearch?.();
  }

  /**
   * A name's answer. Past the deadline (replies read in one busy turn can keep the timer from
   * firing for a tenth of a second on a loaded machine) the names still open time out now.
   */
  answer(i: number, a: SnapshotResult<R>): void {
    if (this.results[i]) return;
    this.results[i] = a;
    if (--this.remaining === 0) this.done();
    else if (a.elapsedMs >= this.timeoutMs) this.expire();
  }

  fail(i: number, error: EpicsError, elapsedMs = performance.now() - this.t0): void {
    if (this.results[i]) return;
    this.results[i] = { name: this.names[i]!, ok: false, error, code: error.code, elapsedMs };
    if (--this.remaining === 0) this.done();
  }

  /** The deadline: every name still open times out. */
  private expire(): void {
    const { names, items } = this;
    const elapsedMs = performance.now() - this.t0;
    // Thousands of names may time out at once: their errors carry no stack (it would only show this timer).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      for (let i = 0; i < names.length && this.remaining > 0; i++) {
        if (this.results[i]) continue;
        const item = items[i];
        this.fail(i, item ? item.ch.timeoutError() : new TimeoutError('not started within the timeout', names[i]), elapsedMs);
      }
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  private done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.uncork();
    this.unwatch?.();
    this.resolve(this.results as SnapshotResult<R>[]);
    // The reads still in flight are cancelled and the channels let go of once the caller has its
    // results (for 10,000 names that is tens of milliseconds); a reply that comes before finds
    // its name answered and is dropped, and after the context's close() all of it is a no-op.
    setImmediate(() => {
      const { mgr, items } = this;
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (!item) continue;
        item.cancel();
        mgr.release(item.ch as Ch);
      }
    });
  }
}
