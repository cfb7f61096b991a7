// A snapshot in progress: many names read concurrently through the one read path, with one timer
// for the batch and names set up a slice per event-loop turn; one result per name, never a rejection.
import { performance } from 'node:perf_hooks';
import { type CaValue, type DbrMetadata, Reading } from '../ca/dbr.js';
import type { Channel } from './channel.js';
import { AbortedError, CaError, ProtocolError, TimeoutError } from './errors.js';
import type { ChannelManager } from './manager.js';
import { checkTimeout } from './pending.js';
import { ChannelRead, ReadSpec } from './read.js';
import type { AnyReading } from './reading.js';
import type { SnapshotOptions, SnapshotResult } from './snapshot.js';

type AnyResult = SnapshotResult<AnyReading>;

/** A success: a Reading that also carries the name and the elapsed time (the reply is decoded straight into it). */
class Answer extends Reading {
  readonly ok = true as const;
  constructor(
    readonly name: string,
    readonly elapsedMs: number,
    value: CaValue, dbrType: number, count: number, status: number, severity: number,
    secondsPastEpoch: number, nanoseconds: number, metadata: DbrMetadata | undefined,
  ) {
    super(value, dbrType, count, status, severity, secondsPastEpoch, nanoseconds, metadata);
  }

  get reading(): Reading {
    return this;
  }

  toJSON(): object {
    return {
      name: this.name, ok: true, value: this.value, severity: this.severity, status: this.status,
      timestamp: this.timestamp, secondsPastEpoch: this.secondsPastEpoch, nanoseconds: this.nanoseconds, elapsedMs: this.elapsedMs,
    };
  }
}

/** One name of the batch: its read, decoded into the batch's result, with the outcome going to the batch. */
class Item extends ChannelRead {
  constructor(private readonly batch: Batch, readonly i: number, ch: Channel, spec: ReadSpec) {
    super(ch, spec);
  }

  protected get settled(): boolean {
    return this.batch.results[this.i] !== undefined;
  }

  override makeReading(
    value: CaValue, dbrType: number, count: number, status: number, severity: number,
    secondsPastEpoch: number, nanoseconds: number, metadata: DbrMetadata | undefined,
  ): Answer {
    const b = this.batch;
    return new Answer(b.names[this.i]!, performance.now() - b.t0, value, dbrType, count, status, severity, secondsPastEpoch, nanoseconds, metadata);
  }

  protected succeeded(r: Reading): void {
    this.batch.answer(this.i, r as Answer);
  }

  protected failed(e: CaError): void {
    this.batch.fail(this.i, e);
  }
}

/** Names set up per event-loop turn when a snapshot starts. */
const START_SLICE = 256;

class Batch {
  readonly results: Array<AnyResult | undefined>;
  private readonly items: Array<Item | undefined>;
  private remaining: number;
  readonly t0 = performance.now();
  private readonly spec: ReadSpec;
  private timer: NodeJS.Timeout | undefined;
  /** Names acquired so far (they are set up a slice per event-loop turn). */
  private started = 0;
  /** Whether this batch holds the searcher to full datagrams while it sets names up. */
  private corked = false;
  private onAbort: (() => void) | undefined;
  private resolve!: (r: AnyResult[]) => void;
  readonly promise: Promise<AnyResult[]>;

  constructor(private readonly mgr: ChannelManager, readonly names: readonly string[], private readonly opts: SnapshotOptions) {
    const n = names.length;
    this.results = new Array(n);
    this.items = new Array(n);
    this.remaining = n;
    this.spec = new ReadSpec(opts, mgr.config.maxArrayBytes);
    this.promise = new Promise((res) => (this.resolve = res));
  }

  start(timeout: number): void {
    const { mgr, names } = this;
    const n = names.length;
    // One timer for the batch, counted from the start (setting up 10,000 names takes time too).
    this.timer = setTimeout(() => {
      for (let i = 0; i < n && this.remaining > 0; i++) {
        if (this.results[i]) continue;
        const item = this.items[i];
        this.fail(i, item ? item.ch.timeoutError() : new TimeoutError('not started within the timeout', names[i]));
      }
    }, timeout);
    const signal = this.opts.signal;
    if (signal) {
      this.onAbort = () => {
        for (let i = 0; i < n && this.remaining > 0; i++) if (!this.results[i]) this.fail(i, new AbortedError(undefined, names[i]));
      };
      if (signal.aborted) return this.onAbort();
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
    if (n > START_SLICE) {
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
    const { mgr, names, items, spec } = this;
    const end = Math.min(names.length, this.started + START_SLICE);
    for (let i = this.started; i < end && this.remaining > 0; i++) {
      const name = names[i]!;
      let ch: Channel;
      try {
        ch = mgr.acquire(name);
      } catch (e) {
        this.fail(i, e instanceof CaError ? e : new ProtocolError(String(e), name));
        continue;
      }
      const item = new Item(this, i, ch, spec);
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
    this.mgr.uncorkSearch();
  }

  answer(i: number, a: Answer): void {
    if (this.results[i]) return;
    this.results[i] = a as unknown as AnyResult;
    if (--this.remaining === 0) this.done();
  }

  fail(i: number, error: CaError): void {
    if (this.results[i]) return;
    this.results[i] = { name: this.names[i]!, ok: false, error, code: error.code, elapsedMs: performance.now() - this.t0 };
    if (--this.remaining === 0) this.done();
  }

  private done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.uncork();
    if (this.onAbort) this.opts.signal?.removeEventListener('abort', this.onAbort);
    const { mgr, items } = this;
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (!item) continue;
      item.cancel();
      mgr.release(item.ch);
    }
    this.resolve(this.results as AnyResult[]);
  }
}

/** Read many names at once, each against its own timeout; one result per name, in input order. */
export function runSnapshot(mgr: ChannelManager, names: readonly string[], opts: SnapshotOptions): Promise<AnyResult[]> {
  const timeout = checkTimeout(opts.timeout);
  if (names.length === 0) return Promise.resolve([]);
  const b = new Batch(mgr, names, opts);
  b.start(timeout);
  return b.promise;
}
