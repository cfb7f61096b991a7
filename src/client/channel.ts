// A channel's life: searching -> connecting -> connected -> (disconnected -> searching) -> closed,
// its server-side identity (sid, native type and count, access rights), and the listeners that
// want to hear when it connects or disconnects (pending operations, monitors).
import { CA_ACCESS_READ, CA_ACCESS_WRITE, NATIVE_TYPE_NAMES, type NativeTypeName } from '../ca/constants.js';
import type { CircuitChannel } from '../ca/circuit.js';
import type { TcpCircuit } from '../transport/tcp.js';
import type { SearchTarget } from '../transport/udp.js';

export type ChannelState = 'searching' | 'connecting' | 'connected' | 'closed';

export type ConnectionListener = (connected: boolean) => void;

/** A one-shot wait for the channel to connect, as an object (no closure per waiter). */
export interface ConnectWaiter {
  channelConnected(ch: Channel): void;
}

/** What a channel needs from its Context. */
export interface ChannelOwner {
  /** The server dropped the channel or refused it: search for it again. */
  research(ch: Channel): void;
}

export class Channel implements CircuitChannel, SearchTarget {
  state: ChannelState = 'searching';
  sid = 0;
  nativeType = -1;
  nativeCount = 0;
  rights = 0;
  /** True once the channel has been connected at least once. */
  everConnected = false;
  /** Last reason the server gave for refusing the channel. */
  lastFailure: string | undefined;
  /** Set when the channel's last circuit died of a protocol error (cleared on connect). */
  protocolError: string | undefined;
  /** Delay before the next search, after a circuit failure (a governor against tight loops). */
  researchDelayMs = 0;
  transport: TcpCircuit | undefined;
  /** Operations and monitors holding this channel. */
  refs = 0;
  private listeners: ConnectionListener[] | undefined;
  private waiter: ConnectWaiter | undefined;
  private moreWaiters: ConnectWaiter[] | undefined;
  /** SearchTarget: the name resolver's state for this channel. */
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

  /** Call `fn` once the channel is connected (now if it already is); returns a canceller. */
  whenConnected(fn: () => void): () => void {
    if (this.state === 'connected') {
      fn();
      return () => {};
    }
    const l: ConnectionListener = (up) => {
      if (!up) return;
      this.unlisten(l);
      fn();
    };
    return this.listen(l);
  }

  /** Call `w.channelConnected` once the channel connects (the caller checks `connected` first). */
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

  private notify(up: boolean): void {
    const ls = this.listeners;
    if (!ls || ls.length === 0) return;
    for (const l of ls.slice()) l(up);
  }

  onCreated(sid: number, nativeType: number, nativeCount: number): void {
    if (this.state !== 'connecting') return;
    this.sid = sid;
    this.nativeType = nativeType;
    this.nativeCount = nativeCount;
    this.state = 'connected';
    this.everConnected = true;
    this.lastFailure = undefined;
    this.protocolError = undefined;
    this.researchDelayMs = 0;
    this.notify(true);
    if (this.waiter) this.wakeWaiters();
  }

  onAccessRights(rights: number): void {
    this.rights = rights;
  }

  onCreateFailed(_status: number, message: string): void {
    this.lastFailure = message;
    this.lost();
  }

  onServerDisconnect(): void {
    this.lost();
  }

  /** The circuit is gone or the server dropped us: tell listeners, then search again. */
  lost(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    this.state = 'searching';
    this.transport = undefined;
    this.sid = 0;
    this.rights = 0;
    if (was === 'connected') this.notify(false);
    this.owner.research(this);
  }

  close(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    this.state = 'closed';
    if (was === 'connected') this.notify(false);
    this.listeners = undefined;
    this.waiter = undefined;
    this.moreWaiters = undefined;
    this.transport = undefined;
  }
}
