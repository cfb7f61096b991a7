// What a monitor is to its user: its options, its events (updates, connection changes, access
// rights, errors) and the Monitor handle (callback form, or an async iterable over a bounded
// queue). The types are generic over the update a monitor delivers: a CA reading of its form or a
// PvaReading.
import type { EpicsError } from './errors.js';
import type { ReadOptions } from './options.js';
import type { PvaReading } from './pva/reading.js';
import type { TimeReading } from './ca/reading.js';

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

/** A CA channel connected: its native type and element count, and the access the server grants. */
export type CaConnectedEvent = {
  kind: 'connected';
  name: string;
  nativeType: number;
  nativeCount: number;
  readAccess: boolean;
  writeAccess: boolean;
};
/**
 * A PV Access channel connected, on the server at `server` (host:port). PV Access tells no access
 * rights on the wire (a refused get or put fails with a RemoteError) and no CA native type: the
 * event carries neither.
 */
export type PvaConnectedEvent = { kind: 'connected'; name: string; server: string };
/** The `connected` event of a monitor whose updates are `R`: PVA's for a PvaReading, CA's otherwise. */
export type ConnectedEvent<R = TimeReading> = R extends PvaReading ? PvaConnectedEvent : CaConnectedEvent;
export type DisconnectedEvent = { kind: 'disconnected'; name: string };
/** The channel connected or lost its server. */
export type ConnectionEvent<R = TimeReading> = ConnectedEvent<R> | DisconnectedEvent;
/**
 * The server changed this client's access rights to the channel while connected (CA's
 * ACCESS_RIGHTS; a PV Access monitor never emits it).
 */
export type AccessRightsEvent = { kind: 'access'; name: string; readAccess: boolean; writeAccess: boolean };
export type MonitorErrorEvent = { kind: 'error'; name: string; error: EpicsError };
/**
 * What a monitor delivers: its updates `R` (a CA reading of the monitor's form, TimeReading by
 * default; a PvaReading over PV Access) and, never dropped, the other events.
 */
export type MonitorEvent<R = TimeReading> = R | ConnectionEvent<R> | AccessRightsEvent | MonitorErrorEvent;
export type MonitorCallback<R = TimeReading> = (event: MonitorEvent<R>) => void;

/**
 * A subscription to one PV, made by Context.monitor(). With a callback, events go to it; without,
 * the Monitor is an async iterable. The channel is re-subscribed after each reconnect.
 */
export abstract class Monitor<R = TimeReading> implements AsyncIterable<MonitorEvent<R>> {
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
