// What a monitor is to its user: its options, its events (updates, connection changes, errors)
// and the Monitor handle (callback form, or an async iterable over a bounded queue).
import type { Reading } from '../ca/dbr.js';
import type { CaError } from './errors.js';
import type { ReadOptions } from './options.js';

export interface MonitorOptions extends ReadOptions {
  /** Event mask: a number (DBE_* bits) or flags; default value + alarm. */
  mask?: number | { value?: boolean; log?: boolean; alarm?: boolean; property?: boolean };
  /**
   * Iterator form: events kept before the oldest update is dropped (counted in `overruns`);
   * connection and error events are never dropped. Default 1000.
   */
  queueSize?: number;
  /** Fail with a not-found error if the channel is not connected within this many ms (default: wait forever). */
  timeout?: number;
  /** Closes the monitor when aborted. */
  signal?: AbortSignal;
  /**
   * Callback form only: large arrays (1 MB and up) are valid only during the callback, and
   * their memory is reused for a later update (no allocation per update). Copy what you keep.
   */
  reuseArrays?: boolean;
}

export type ConnectionEvent =
  /** nativeType and nativeCount are CA's (-1 and 0 over PV Access). */
  | { kind: 'connected'; name: string; nativeType: number; nativeCount: number }
  | { kind: 'disconnected'; name: string };
export type MonitorErrorEvent = { kind: 'error'; name: string; error: CaError };
/** A monitor's events: value updates (a CA Reading, or a PvaReading over PV Access), connection changes, errors. */
export type MonitorEvent<R = Reading> = R | ConnectionEvent | MonitorErrorEvent;
export type MonitorCallback<R = Reading> = (event: MonitorEvent<R>) => void;

/**
 * A subscription to one PV, made by Context.monitor(). With a callback, events go to it; without,
 * the Monitor is an async iterable. The channel is re-subscribed after each reconnect.
 */
export abstract class Monitor<R = Reading> implements AsyncIterable<MonitorEvent<R>> {
  /** Updates dropped because the iterator's queue was full. */
  abstract get overruns(): number;
  /** Updates received. */
  abstract get updates(): number;
  /** The PV name. */
  abstract get name(): string;
  /** True while the channel is connected and the subscription is in place. */
  abstract get active(): boolean;
  /** Cancel the subscription and release the channel. Idempotent. */
  abstract close(): void;
  abstract [Symbol.asyncIterator](): AsyncIterator<MonitorEvent<R>>;

  [Symbol.dispose](): void {
    this.close();
  }
}
