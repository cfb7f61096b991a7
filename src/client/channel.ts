// A channel and its life, with every transition a method of its own: searching -> connecting ->
// connected -> (disconnected -> searching) -> closed; its server-side identity, the one way to
// wait for it to connect, and the listeners that hear it connect and disconnect (monitors).
import { CA_ACCESS_READ, CA_ACCESS_WRITE, NATIVE_TYPE_NAMES, type NativeTypeName } from '../ca/constants.js';
import type { CircuitChannel, FailReason } from '../ca/circuit.js';
import type { TcpCircuit } from '../transport/tcp.js';
import type { SearchTarget } from '../transport/udp.js';
import { type CaError, DisconnectedError, NotFoundError, ProtocolError, RemoteError, TimeoutError } from './errors.js';

export type ChannelState = 'searching' | 'connecting' | 'connected' | 'closed';

/** What a listener hears: connected, disconnected, or new access rights while connected. */
export type ChannelChange = 'connected' | 'disconnected' | 'access';
export type ConnectionListener = (change: ChannelChange) => void;

/** A one-shot wait for the channel to connect, as an object (no closure per waiter). */
export interface ConnectWaiter {
  channelConnected(ch: Channel): void;
}

/** What a channel needs from the manager that made it. */
export interface ChannelOwner {
  /** The channel lost its server (or was refused): search again after `delayMs`, or forget it. */
  research(ch: Channel, delayMs: number): void;
}

/** Longest pause before searching again for a channel whose circuit keeps failing. */
const MAX_RESEARCH_DELAY_MS = 5000;

/** The channel as its own transitions see it: the fields others only read are writable here. */
type Writable = { -readonly [K in 'state' | 'sid' | 'nativeType' | 'nativeCount' | 'transport']: Channel[K] };

export class Channel implements CircuitChannel, SearchTarget {
  // Read by everyone, written only by this class's transitions (through `Writable`): plain
  // fields rather than getters, as they are read for every operation.
  readonly state: ChannelState = 'searching';
  readonly sid: number = 0;
  readonly nativeType: number = -1;
  readonly nativeCount: number = 0;
  /** The circuit of a connecting or connected channel. */
  readonly transport: TcpCircuit | undefined;
  private rights = 0;
  /** True once the channel has been connected at least once. */
  private everConnected = false;
  /** Last reason the server gave for refusing the channel. */
  private lastFailure: string | undefined;
  /** Set when the channel's last circuit died of a protocol error (cleared on connect). */
  private protocolError: string | undefined;
  /** Delay before the next search, after a circuit failure (a governor against tight loops). */
  private researchDelayMs = 0;
  /** Operations and monitors holding this channel. */
  private refs = 0;
  private listeners: ConnectionListener[] | undefined;
  private waiter: ConnectWaiter | undefined;
  private moreWaiters: ConnectWaiter[] | undefined;
  /** SearchTarget: the name resolver's state for this channel (its own, kept here). */
  searchAttempt = 0;
  searchDueAt = 0;
  searchQueued = false;

  constructor(
    private readonly owner: ChannelOwner,
    readonly cid: number,
    readonly name: string,
    /** Bytes of the name on the wire (NUL-terminated, padded to 8). */
    readonly paddedLength: number,
  ) {}

  get connected(): boolean {
    return this.state === 'connected';
  }

  get canRead(): boolean {
    return (this.rights & CA_ACCESS_READ) !== 0;
  }

  get canWrite(): boolean {
    return (this.rights & CA_ACCESS_WRITE) !== 0;
  }

  get nativeTypeName(): NativeTypeName | undefined {
    return NATIVE_TYPE_NAMES[this.nativeType];
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
    (this.listeners ??= []).push(l);
    return () => this.unlisten(l);
  }

  private unlisten(l: ConnectionListener): void {
    const ls = this.listeners;
    if (!ls) return;
    const i = ls.indexOf(l);
    if (i >= 0) ls.splice(i, 1);
  }

  /** The one wait for a connection: `w.channelConnected` once the channel connects (check `connected` first). */
  addWaiter(w: ConnectWaiter): void {
    if (!this.waiter) this.waiter = w;
    else (this.moreWaiters ??= []).push(w);
  }

  removeWaiter(w: ConnectWaiter): void {
    if (this.waiter === w) {
      this.waiter = this.moreWaiters?.shift();
      return;
    }
    const more = this.moreWaiters;
    if (!more) return;
    const i = more.indexOf(w);
    if (i >= 0) more.splice(i, 1);
  }

  private wakeWaiters(): void {
    const w = this.waiter;
    const more = this.moreWaiters;
    this.waiter = undefined;
    this.moreWaiters = undefined;
    if (w) w.channelConnected(this);
    if (more) for (const x of more) x.channelConnected(this);
  }

  private notify(change: ChannelChange): void {
    const ls = this.listeners;
    if (!ls || ls.length === 0) return;
    for (const l of ls.slice()) l(change);
  }

  // ---- transitions ----

  /** searching -> connecting: a server answered the search; ask its circuit for the channel. */
  found(t: TcpCircuit): void {
    if (this.state !== 'searching') return;
    const w: Writable = this;
    w.state = 'connecting';
    w.transport = t;
    t.circuit.createChannel(this);
  }

  /** CircuitChannel: connecting -> connected. */
  onCreated(sid: number, nativeType: number, nativeCount: number): void {
    if (this.state !== 'connecting') return;
    const w: Writable = this;
    w.sid = sid;
    w.nativeType = nativeType;
    w.nativeCount = nativeCount;
    w.state = 'connected';
    this.everConnected = true;
    this.lastFailure = undefined;
    this.protocolError = undefined;
    this.researchDelayMs = 0;
    this.notify('connected');
    if (this.waiter) this.wakeWaiters();
  }

  /** CircuitChannel: the server's access rights (before the channel connects, and on any change after). */
  onAccessRights(rights: number): void {
    const changed = rights !== this.rights;
    this.rights = rights;
    if (changed && this.state === 'connected') this.notify('access');
  }

  /** CircuitChannel: the server refused the channel; search again. */
  onCreateFailed(_status: number, message: string): void {
    this.lastFailure = message;
    this.disconnected();
  }

  /** CircuitChannel: the server dropped the channel; search again. */
  onServerDisconnect(): void {
    this.disconnected();
  }

  /**
   * The channel's circuit is gone. A broken circuit (protocol error, connect failure) doubles the
   * pause before the next search; a plain disconnect searches again at once.
   */
  circuitLost(broken: boolean, protocolError?: string): void {
    if (protocolError !== undefined) this.protocolError = protocolError;
    this.researchDelayMs = broken ? Math.min(Math.max(this.researchDelayMs * 2, 250), MAX_RESEARCH_DELAY_MS) : 0;
    this.disconnected();
  }

  /** -> searching: tell the listeners (when it was connected), then hand it back for a search. */
  private disconnected(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    const w: Writable = this;
    w.state = 'searching';
    w.transport = undefined;
    w.sid = 0;
    this.rights = 0;
    if (was === 'connected') this.notify('disconnected');
    this.owner.research(this, this.researchDelayMs);
  }

  /** The manager forgets the channel: tell its circuit (and the server, when connected), then close. */
  discard(): void {
    this.transport?.circuit.clearChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  /** -> closed, for good. */
  close(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    const w: Writable = this;
    w.state = 'closed';
    if (was === 'connected') this.notify('disconnected');
    this.listeners = undefined;
    this.waiter = undefined;
    this.moreWaiters = undefined;
    w.transport = undefined;
  }

  // ---- errors an operation on this channel fails with ----

  /** The error a pending operation fails with when its time is up, by what the channel went through. */
  timeoutError(): CaError {
    if (this.state === 'connected') return new TimeoutError('no reply within the timeout', this.name);
    if (this.protocolError) return new ProtocolError(`the server broke the protocol: ${this.protocolError}`, this.name);
    if (this.everConnected) return new DisconnectedError('the channel is disconnected', this.name);
    if (this.lastFailure) return new NotFoundError(`the server refused the channel: ${this.lastFailure}`, this.name);
    if (this.state === 'connecting') return new TimeoutError('found, but the channel did not connect within the timeout', this.name);
    return new NotFoundError('no server answered the search within the timeout', this.name);
  }

  /** The error of an operation that ended without a reply. */
  failureError(reason: FailReason): CaError {
    if (reason.kind === 'disconnected') {
      return new DisconnectedError(`the circuit was lost${reason.message ? ` (${reason.message})` : ''}`, this.name);
    }
    if (reason.kind === 'protocol') return new ProtocolError(`protocol error from the server: ${reason.message}`, this.name);
    return new RemoteError(reason.status, reason.message, this.name);
  }
}
