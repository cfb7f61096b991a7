// One pending operation's promise with its own timeout and AbortSignal: settles once, and on
// settling runs the cleanups (cancel listeners, forget the ioid) and clears its timer.
import { onAbort } from './abort.js';
import { AbortedError, BadArgumentError, type EpicsError } from './errors.js';

export const DEFAULT_TIMEOUT_MS = 5000;

export function checkTimeout(t: number | undefined, pvName?: string): number {
  if (t === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof t !== 'number' || !(t >= 0) || !Number.isFinite(t)) {
    throw new BadArgumentError(`timeout must be a non-negative number of milliseconds, got ${String(t)}`, pvName);
  }
  return t;
}

export class Pending<T> {
  readonly promise: Promise<T>;
  private res!: (v: T) => void;
  private rej!: (e: unknown) => void;
  private timer: NodeJS.Timeout | undefined;
  private cleanups: Array<() => void> = [];
  private unwatch: (() => void) | undefined;
  done = false;

  constructor(
    private readonly pvName: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    onTimeout: () => EpicsError,
  ) {
    this.promise = new Promise<T>((res, rej) => {
      this.res = res;
      this.rej = rej;
    });
    if (signal?.aborted) {
      this.reject(new AbortedError(undefined, pvName, signal.reason));
      return;
    }
    this.timer = setTimeout(() => this.reject(onTimeout()), timeoutMs);
    if (signal) this.unwatch = onAbort(signal, () => this.reject(new AbortedError(undefined, pvName, signal.reason)));
  }

  /** Run `fn` when the operation settles (whatever the outcome). */
  onSettle(fn: () => void): void {
    if (this.done) fn();
    else this.cleanups.push(fn);
  }

  resolve(v: T): void {
    if (this.done) return;
    this.finish();
    this.res(v);
  }

  reject(e: unknown): void {
    if (this.done) return;
    this.finish();
    this.rej(e);
  }

  private finish(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.unwatch?.();
    const c = this.cleanups;
    this.cleanups = [];
    for (const fn of c) fn();
    void this.pvName;
  }
}
