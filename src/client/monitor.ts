// What a monitor is to its user: its options, its events (updates, connection changes, errors)
// and the Monitor handle (callback form, or an async iterable over a bounded queue).
import type { FormName } from '../ca/constants.js';
import type { CaError } from './errors.js';
import type { ReadOptions } from './options.js';
import type { ReadingOf } from './reading.js';

export interface MonitorOptions extends ReadOptions {
  /** Event mask: a number (DBE_* bits) or flags; default value + alarm. */
  mask?: number | { value?: boolean; log?: boolean; alarm?: boolean; property?: boolean };
  /**
   * Iterator form: events kept before the oldest update is dropped (counted in `overruns`);
   * connection, access-rights and error events are never dropped. Default 1000.
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

/** The channel connected (with the access the server grants) or lost its server. */
export type ConnectionEvent =
  | { kind: 'connected'; name: string; nativeType: number; nativeCount: number; readAccess: boolean; writeAccess: boolean }
  | { kind: 'disconnected'; name: string };
/** The server changed this client's access rights to the channel while connected (CA's ACCESS_RIGHTS). */
export type AccessRightsEvent = { kind: 'access'; name: string; readAccess: boolean; writeAccess: boolean };
export type MonitorErrorEvent = { kind: 'error'; name: string; error: CaError };
/** What a monitor delivers: updates of its form ('time' by default) and, never dropped, the other events. */
export type MonitorEvent<F extends FormName = 'time'> = ReadingOf<F> | ConnectionEvent | AccessRightsEvent | MonitorErrorEvent;
export type MonitorCallback<F extends FormName = 'time'> = (event: MonitorEvent<F>) => void;

/**
 * A subscription to one PV, made by Context.monitor(). With a callback, events go to it; without,
 * the Monitor is an async iterable. The channel is re-subscribed after each reconnect.
 */
export abstract class Monitor<F extends FormName = 'time'> implements AsyncIterable<MonitorEvent<F>> {
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
  abstract [Symbol.asyncIterator](): AsyncIterator<MonitorEvent<F>>;

  [Symbol.dispose](): void {
    this.close();
  }
}
