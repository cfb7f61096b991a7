// A PV Access channel and its life: searching -> connecting -> connected -> (disconnected ->
// searching) -> closed; its server id, the wait for it to connect, and its connection listeners.
import type { SessionChannel } from '../../pva/session.js';
import type { Status } from '../../pva/status.js';
import type { PvaCircuit } from '../../transport/pva-tcp.js';
import type { PvaSearchTarget } from '../../transport/pva-udp.js';
import { type CaError, DisconnectedError, NotFoundError, ProtocolError, TimeoutError } from '../errors.js';

export type PvaChannelState = 'searching' | 'connecting' | 'connected' | 'closed';

export interface PvaConnectWaiter {
  channelConnected(ch: PvaChannel): void;
  /** The channel closed for good (its Context closed) before it connected. */
  channelClosed(ch: PvaChannel): void;
}

export interface PvaChannelOwner {
  research(ch: PvaChannel, delayMs: number): void;
}

const MAX_RESEARCH_DELAY_MS = 5000;

export class PvaChannel implements SessionChannel, PvaSearchTarget {
  state: PvaChannelState = 'searching';
  sid = 0;
  transport: PvaCircuit | undefined;
  private everConnected = false;
  private lastFailure: string | undefined;
  private protocolError: string | undefined;
  private researchDelayMs = 0;
  private refs = 0;
  private listeners: Array<(up: boolean) => void> | undefined;
  private waiters: PvaConnectWaiter[] = [];
  searchAttempt = 0;
  searchDueAt = 0;
  searchQueued = false;

  constructor(private readonly owner: PvaChannelOwner, readonly cid: number, readonly name: string) {}

  get connected(): boolean {
    return this.state === 'connected';
  }

  retain(): void {
    this.refs++;
  }

  /** Drop a reference; true when nobody holds the channel and it is not connected. */
  release(): boolean {
    this.refs--;
    return this.refs <= 0 && this.state !== 'connected' && this.state !== 'closed';
  }

  get held(): boolean {
    return this.refs > 0;
  }

  listen(l: (up: boolean) => void): () => void {
    (this.listeners ??= []).push(l);
    return () => {
      const i = this.listeners?.indexOf(l) ?? -1;
      if (i >= 0) this.listeners!.splice(i, 1);
    };
  }

  addWaiter(w: PvaConnectWaiter): void {
    this.waiters.push(w);
  }

  removeWaiter(w: PvaConnectWaiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
  }

  private notify(up: boolean): void {
    const ls = this.listeners;
    if (ls?.length) for (const l of ls.slice()) l(up);
  }

  /** searching -> connecting: a server answered; ask its connection for the channel. */
  found(c: PvaCircuit): void {
    if (this.state !== 'searching') return;
    this.state = 'connecting';
    this.transport = c;
    c.session.createChannel(this);
  }

  /** SessionChannel: connecting -> connected. */
  onCreated(sid: number): void {
    if (this.state !== 'connecting') return;
    this.sid = sid;
    this.state = 'connected';
    this.everConnected = true;
    this.lastFailure = undefined;
    this.protocolError = undefined;
    this.researchDelayMs = 0;
    this.notify(true);
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w.channelConnected(this);
  }

  /** SessionChannel: the server refused the channel; search again after a pause. */
  onCreateFailed(status: Status): void {
    this.lastFailure = status.message || 'refused';
    this.researchDelayMs = Math.min(Math.max(this.researchDelayMs * 2, 250), MAX_RESEARCH_DELAY_MS);
    this.disconnected();
  }

  /** SessionChannel: the server destroyed the channel. */
  onDestroyed(): void {
    this.disconnected();
  }

  /** The connection is gone; a broken one (protocol error, refused connect) delays the next search. */
  circuitLost(broken: boolean, protocolError?: string): void {
    if (protocolError !== undefined) this.protocolError = protocolError;
    this.researchDelayMs = broken ? Math.min(Math.max(this.researchDelayMs * 2, 250), MAX_RESEARCH_DELAY_MS) : 0;
    this.disconnected();
  }

  private disconnected(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    this.state = 'searching';
    this.transport = undefined;
    this.sid = 0;
    if (was === 'connected') this.notify(false);
    this.owner.research(this, this.researchDelayMs);
  }

  /** The manager forgets the channel: tell its connection (and the server), then close. */
  discard(): void {
    this.transport?.session.destroyChannel(this, this.state === 'connected' ? this.sid : undefined);
    this.close();
  }

  close(): void {
    if (this.state === 'closed') return;
    const was = this.state;
    this.state = 'closed';
    if (was === 'connected') this.notify(false);
    this.listeners = undefined;
    const ws = this.waiters;
    this.waiters = [];
    this.transport = undefined;
    for (const w of ws) w.channelClosed(this);
  }

  /** The error a pending operation fails with when its time is up. */
  timeoutError(): CaError {
    if (this.state === 'connected') return new TimeoutError('no reply within the timeout', this.name);
    if (this.protocolError) return new ProtocolError(`the server broke the protocol: ${this.protocolError}`, this.name);
    if (this.everConnected) return new DisconnectedError('the channel is disconnected', this.name);
    if (this.lastFailure) return new NotFoundError(`the server refused the channel: ${this.lastFailure}`, this.name);
    if (this.state === 'connecting') return new TimeoutError('found, but the channel did not connect within the timeout', this.name);
    return new NotFoundError('no server answered the search within the timeout', this.name);
  }
}
