// What every monitor does whatever its protocol: deliver events to a callback or to the bounded
// queue and its iterator, fail on the connect timeout or the abort signal, fail once, close once.
import type { Logger } from '../log.js';
import { onAbort } from './abort.js';
import { AbortedError, BadArgumentError, type EpicsError } from './errors.js';
import { Monitor, type MonitorCallback, type MonitorEvent } from './monitor.js';
import { EventQueue, type QueuedEvent } from './queue.js';

/** What a monitor needs of its channel here. */
export interface MonitoredChannel {
  readonly name: string;
  readonly connected: boolean;
  /** The error of a connect timeout, by what the channel went through. */
  timeoutError(): EpicsError;
}

export interface DeliveryOptions {
  queueSize?: number;
  timeout?: number;
  signal?: AbortSignal;
}

export abstract class DeliveringMonitor<R extends QueuedEvent, C extends MonitoredChannel> extends Monitor<R> {
  protected received = 0;
  protected closed = false;
  private queue: EventQueue<MonitorEvent<R>> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  /** The iterator waiting for the next event. */
  private waiter: ((r: IteratorResult<MonitorEvent<R>>) => void) | undefined;
  private failure: EpicsError | undefined;

  constructor(
    protected readonly ch: C,
    protected readonly callback: MonitorCallback<R> | undefined,
    private readonly log: Logger,
  ) {
    super();
  }

  /** Subscribe (again) on the connected channel. */
  protected abstract onConnected(): void;
  /**
   * An update left the monitor: its callback returned, the iterator took it, or the full queue
   * dropped it. Where the server waits for acknowledgements (PV Access), this is when they go.
   */
  protected consumed(): void {}
  /** Undo what the subclass holds (listener, subscription, channel): called once, by close(). */
  protected abstract release(): void;

  /**
   * Start delivering: the queue (iterator form), the abort signal, the connect timeout, and the
   * subscription at once when the channel is already connected.
   */
  protected begin(opts: DeliveryOptions): void {
    const ch = this.ch;
    if (!this.callback) this.queue = new EventQueue<MonitorEvent<R>>(Math.max(1, opts.queueSize ?? 1000));
    const signal = opts.signal;
    if (signal) {
      if (signal.aborted) queueMicrotask(() => this.fail(new AbortedError(undefined, ch.name, signal.reason)));
      else this.unwatch = onAbort(signal, () => this.fail(new AbortedError(undefined, ch.name, signal.reason)));
    }
    if (opts.timeout !== undefined) {
      this.timer = setTimeout(() => {
        if (!ch.connected) this.fail(ch.timeoutError());
      }, opts.timeout);
    }
    if (ch.connected) queueMicrotask(() => this.onConnected());
  }

  /** The channel connected: the connect timeout no longer applies. */
  protected stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  get overruns(): number {
    return this.queue?.overruns ?? 0;
  }

  /** Updates waiting in the iterator's queue. */
  protected get queuedUpdates(): number {
    return this.queue?.values ?? 0;
  }

  get updates(): number {
    return this.received;
  }

  get name(): string {
    return this.ch.name;
  }

  protected emit(ev: MonitorEvent<R>): void {
    if (this.closed) return;
    const update = ev.kind === 'update';
    if (this.callback) {
      try {
        this.callback(ev);
      } catch (e) {
        this.log.warn({ pv: this.ch.name, err: (e as Error)?.message }, 'monitor callback threw');
      }
      if (update) this.consumed();
      return;
    }
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ value: ev, done: false });
      if (update) this.consumed();
      return;
    }
    if (this.queue!.push(ev)) this.consumed();
  }

  protected fail(err: EpicsError): void {
    if (this.closed) return;
    this.emit({ kind: 'error', name: this.ch.name, error: err });
    if (!this.callback) this.failure = err;
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopTimer();
    this.unwatch?.();
    this.release();
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      if (this.failure && this.failure.code !== 'ERR_EPICS_ABORTED')
        w({ value: { kind: 'error', name: this.ch.name, error: this.failure }, done: false });
      else w({ value: undefined, done: true });
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<MonitorEvent<R>> {
    const q = this.queue;
    if (!q) throw new BadArgumentError('this monitor delivers to a callback; it is not iterable', this.ch.name);
    return {
      next: (): Promise<IteratorResult<MonitorEvent<R>>> => {
        if (q.length > 0) {
          const ev = q.shift()!;
          if (ev.kind === 'update') this.consumed();
          return Promise.resolve({ value: ev, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((res) => (this.waiter = res));
      },
      return: (): Promise<IteratorResult<MonitorEvent<R>>> => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
