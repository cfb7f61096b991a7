// The life every channel shares, whatever its protocol: its state, the references that keep it,
// its connection listeners and waiters, the pause before searching again after a broken
// connection, and the error a timed-out operation fails with. The protocol's channel adds its
// transitions' wire side (src/client/ca/channel.ts, src/client/pva/channel.ts).
import { type EpicsError, DisconnectedError, NotFoundError, ProtocolError, TimeoutError, TlsError, type TlsErrorCode } from './errors.js';

export type ChannelState = 'searching' | 'connecting' | 'connected' | 'closed';

/** What a listener hears: connected, disconnected, or new access rights while connected (CA only). */
export type ChannelChange = 'connected' | 'disconnected' | 'access';
export type ConnectionListener = (change: ChannelChange) => void;

/** What a channel needs from the manager that made it. */
export interface ChannelOwner {
  /** The channel lost its server (or was refused): search again after `delayMs`, or forget it. */
  research(ch: { readonly cid: number; readonly name: string }, delayMs: number): void;
}

/** Longest pause before searching again for a channel whose connection keeps failing. */
const MAX_RESEARCH_DELAY_MS = 5000;

export abstract class ChannelLife<W extends { channelConnected(ch: never): void }> {
  // Read by everyone, written only by the transitions (through setState/setSid): plain fields
  // rather than getters, as they are read for every operation.
  readonly state: ChannelState = 'searching';
  readonly sid: number = 0;
  /** True once the channel has been connected at least once. */
  private everConnected = false;
  /** Last reason the server gave for refusing the channel. */
  protected lastFailure: string | undefined;
  /** Set when the channel's last connection died of a protocol error (cleared on connect). */
  private protocolError: string | undefined;
  /** Set when its last server could not be reached over TLS, or only without it (cleared on connect). */
  protected tlsFailure: TlsError | undefined;
  /** Delay before the next search, after a connection failure (a governor against tight loops). */
  protected researchDelayMs = 0;
  /** Operations and monitors holding this channel. */
  private refs = 0;
  private listeners: ConnectionListener[] | undefined;
  private waiter: W | undefined;
  private moreWaiters: W[] | undefined;
  /** The name resolver's state for this channel (its own, kept here). */
  searchAttempt = 0;
  searchDueAt = 0;
  searchQueued = false;
  searchLost = false;

  constructor(
    private readonly owner: ChannelOwner,
    readonly cid: number,
    readonly name: string,
  ) {}

  get connected(): boolean {
    return this.state === 'connected';
  }

  protected setState(s: ChannelState): void {
    (this as { state: ChannelState }).state = s;
  }

  protected setSid(sid: number): void {
    (this as { sid: number }).sid = sid;
  }

  // ---- references (the manager forgets a channel nobody holds) ----

  retain(): void {
    this.refs++;
  }

  /** Drop a reference; true when nobody holds the channel any more and it is not connected. */
  release(): boolean {
    this.refs--;
    return this.refs <= 0 && this.state !== 'connected' && this.state !== 'closed';
  }

  get held(): boolean {
    return this.refs > 0;
  }

  // ---- waiting and listening ----

  /** Listen to connection changes; returns the remover. */
  listen(l: ConnectionListener): () => void {
    // Most channels have one listener: an array made with it holds one slot, not push's seventeen.
    if (this.listeners) this.listeners.push(l);
    else this.listeners = [l];
    return () => this.unlisten(l);
  }

  private unlisten(l: ConnectionListener): void {
    const ls = this.listeners;
    if (!ls) return;
    const i = ls.indexOf(l);
    if (i >= 0) ls.splice(i, 1);
  }

  /** The one wait for a connection: `w.channelConnected` once the channel connects (check `connected` first). */
  addWaiter(w: W): void {
    if (!this.waiter) this.waiter = w;
    else (this.moreWaiters ??= []).push(w);
  }

  removeWaiter(w: W): void {
    if (this.waiter === w) {
      this.waiter = this.moreWaiters?.shift();
      return;
    }
    const more = this.moreWaiters;
    if (!more) return;
    const i = more.indexOf(w);
    if (i >= 0) more.splice(i, 1);
  }

  /** Forget the waiters; returns them (none: undefined). */
  protected takeWaiters(): W[] | undefined {
    const w = this.waiter;
    if (!w) return undefined;
    const all = this.moreWaiters ? [w, ...this.moreWaiters] : [w];
    this.waiter = undefined;
    this.moreWaiters = undefined;
    return all;
  }

  protected notify(change: ChannelChange): void {
    const ls = this.listeners;
    if (!ls || ls.length === 0) return;
    for (const l of ls.slice()) l(change);
  }

  // ---- transitions ----

  /** -> connected with the server's id: tell the listeners, then wake the waiters. */
  protected becameConnected(sid: number): void {
    this.setSid(sid);
    this.setState('connected');
    this.everConnected = true;
    this.lastFailure = undefined;
    this.protocolError = undefined;
    this.tlsFailure = undefined;
    this.researchDelayMs = 0;
    this.notify('connected');
    const w = this.waiter;
    if (!w) return;
    const more = this.moreWaiters;
    this.waiter = undefined;
    this.moreWaiters = undefined;
    const self = this as unknown as never;
    w.channelConnected(self);
    if (more) for (const x of more) x.channelConnected(self);
  }

  /** Double the pause before the next search (from 250 ms up to 5 s). */
  protected backOff(): void {
    this.researchDelayMs = Math.min(Math.max(this.researchDelayMs * 2, 250), MAX_RESEARCH_DELAY_MS);
  }

  /**
   * The channel's connection is gone. A broken one (protocol error, refused connect) doubles the
   * pause before the next search; a plain disconnect searches again at once.
   */
  circuitLost(broken: boolean, protocolError?: string, tlsFailure?: TlsError): void {
    if (protocolError !== undefined) this.protocolError = protocolError;
    if (tlsFailure !== undefined) this.tlsFailure = tlsFailure;
    if (broken) this.backOff();
    else this.researchDelayMs = 0;
    this.disconnected();
  }

  /** -> searching: forget the connection, tell the listeners (when it was connected), hand the channel back for a search. */
  protected disconnected(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    this.setState('searching');
    this.dropConnection();
    this.setSid(0);
    if (was === 'connected') this.notify('disconnected');
    this.owner.research(this, this.researchDelayMs);
  }

  /** Forget the connection's side of the channel (its circuit, its access rights). */
  protected abstract dropConnection(): void;

  /** -> closed: tell the listeners when it was connected and forget them; returns the waiters left. */
  protected shut(): W[] | undefined {
    const was = this.state;
    this.setState('closed');
    if (was === 'connected') this.notify('disconnected');
    this.listeners = undefined;
    return this.takeWaiters();
  }

  // ---- the error an operation on this channel fails with ----

  /** The error a pending operation fails with when its time is up, by what the channel went through. */
  timeoutError(): EpicsError {
    if (this.state === 'connected') return new TimeoutError('no reply within the timeout', this.name);
    const tls = this.tlsFailure;
    if (tls) return new TlsError(tls.code as TlsErrorCode, tls.message, this.name, tls.cause);
    if (this.protocolError) return new ProtocolError(`the server broke the protocol: ${this.protocolError}`, this.name);
    if (this.everConnected) return new DisconnectedError('the channel is disconnected', this.name);
    if (this.lastFailure) return new NotFoundError(`the server refused the channel: ${this.lastFailure}`, this.name);
    if (this.state === 'connecting') return new TimeoutError('found, but the channel did not connect within the timeout', this.name);
    return new NotFoundError('no server answered the search within the timeout', this.name);
  }
}
