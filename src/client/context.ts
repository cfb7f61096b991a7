// The Context: configuration, name resolution (one UDP searcher), the circuit pool (one TCP
// circuit per server), the channel cache, get/put, and close() that releases everything.
import { decodeDbrFlags, type Reading } from '../ca/dbr.js';
import { intToIpv4, MAX_NAME_BYTES } from '../ca/search.js';
import { paddedLength } from '../ca/messages.js';
import type { FailReason } from '../ca/circuit.js';
import { resolveConfig, type CaConfig, type ContextOptions } from '../transport/config.js';
import { TcpCircuit, type CloseReason } from '../transport/tcp.js';
import { UdpSearcher, type SearchTarget } from '../transport/udp.js';
import { getLogger } from '../log.js';
import { Channel, type ChannelOwner } from './channel.js';
import { encodePut, planRead, type PutValue, type ReadOptions } from './convert.js';
import {
  AccessDeniedError, BadArgumentError, CaError, ClosedError, DisconnectedError, NotFoundError,
  ProtocolError, RemoteError, TimeoutError,
} from './errors.js';
import { Monitor, type MonitorCallback, type MonitorOptions } from './monitor.js';
import { checkTimeout, Pending, type CallOptions } from './pending.js';
import { runSnapshot, type SnapshotOptions, type SnapshotResult } from './snapshot.js';

const log = getLogger('ca.context');

export interface GetOptions extends CallOptions, ReadOptions {}

export interface PutOptions extends CallOptions {
  /** Wait for the server to complete the write (WRITE_NOTIFY, default) or fire and forget (WRITE). */
  wait?: boolean;
}

export class Context implements ChannelOwner {
  readonly config: CaConfig;
  private udp: UdpSearcher | undefined;
  private readonly circuits = new Map<string, TcpCircuit>();
  private readonly channels = new Map<string, Channel>();
  private readonly monitors = new Set<Monitor>();
  private nextCid = 1;
  private isClosed = false;

  constructor(options: ContextOptions = {}) {
    this.config = resolveConfig(options);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** Read a PV once. Resolves to a Reading (value, alarm, timestamp, metadata). */
  async get(name: string, opts: GetOptions = {}): Promise<Reading> {
    const timeout = checkTimeout(opts.timeout, name);
    const ch = this.acquire(name);
    const p = new Pending<Reading>(name, timeout, opts.signal, () => this.timeoutError(ch));
    p.onSettle(() => this.release(ch));
    p.onSettle(ch.whenConnected(() => this.startRead(ch, opts, p)));
    return p.promise;
  }

  private startRead(ch: Channel, opts: ReadOptions, p: Pending<Reading>): void {
    if (p.done) return;
    if (!ch.canRead) return p.reject(new AccessDeniedError('no read access', ch.name));
    const t = ch.transport!;
    let plan;
    try {
      plan = planRead(ch, opts, this.config.maxArrayBytes, t.circuit.serverVersion);
    } catch (e) {
      return p.reject(e);
    }
    const ioid = t.circuit.read(ch.sid, plan.dbrType, plan.count, {
      onReply: (h, payload, owned, hostOrder) => {
        const r = decodeDbrFlags(h.dataType, h.dataCount, payload, plan.asArray, plan.longString, owned, hostOrder);
        if (r) p.resolve(r);
        else p.reject(new ProtocolError(`undecodable reply (type ${h.dataType}, count ${h.dataCount}, ${payload.length} bytes)`, ch.name));
      },
      onFail: (reason) => p.reject(this.failError(reason, ch.name)),
    });
    p.onSettle(() => t.circuit.abandon(ioid));
  }

  /** Write a PV. By default waits for completion (WRITE_NOTIFY); `wait: false` sends a WRITE. */
  async put(name: string, value: PutValue, opts: PutOptions = {}): Promise<void> {
    const timeout = checkTimeout(opts.timeout, name);
    const ch = this.acquire(name);
    const p = new Pending<void>(name, timeout, opts.signal, () => this.timeoutError(ch));
    p.onSettle(() => this.release(ch));
    p.onSettle(ch.whenConnected(() => this.startWrite(ch, value, opts.wait !== false, p)));
    return p.promise;
  }

  private startWrite(ch: Channel, value: PutValue, wait: boolean, p: Pending<void>): void {
    if (p.done) return;
    if (!ch.canWrite) return p.reject(new AccessDeniedError('no write access', ch.name));
    let enc;
    try {
      enc = encodePut(ch, value);
    } catch (e) {
      return p.reject(e);
    }
    const t = ch.transport!;
    if (!wait) {
      t.circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload);
      return p.resolve();
    }
    const ioid = t.circuit.write(ch.sid, enc.dbrType, enc.count, enc.payload, {
      onReply: () => p.resolve(),
      onFail: (reason) => p.reject(this.failError(reason, ch.name)),
    });
    p.onSettle(() => t.circuit.abandon(ioid));
  }

  /**
   * Subscribe to a PV. With a callback, events go to it and the returned handle has close().
   * Without, the returned Monitor is an async iterable with a bounded queue.
   */
  monitor(name: string, opts?: MonitorOptions, callback?: MonitorCallback): Monitor {
    const ch = this.acquire(name);
    const m = new Monitor(this, ch, opts ?? {}, callback);
    this.monitors.add(m);
    return m;
  }

  /** Read many PVs at once, each against its own timeout; one result per name, never a rejection. */
  snapshot(names: readonly string[], opts: SnapshotOptions = {}): Promise<SnapshotResult[]> {
    return runSnapshot(this, names, opts);
  }

  /** Close every circuit and socket and fail whatever is pending; the process can then exit. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const m of [...this.monitors]) m.close();
    this.udp?.close();
    this.udp = undefined;
    for (const ch of this.channels.values()) ch.close();
    this.channels.clear();
    this.lastCircuit = undefined;
    for (const t of [...this.circuits.values()]) t.close();
    this.circuits.clear();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---- internals shared with Monitor and snapshot ----

  /** @internal Validate a name and take a reference on its channel (creating and searching it). */
  acquire(name: string): Channel {
    if (this.isClosed) throw new ClosedError(undefined, typeof name === 'string' ? name : undefined);
    if (typeof name !== 'string' || name.length === 0) throw new BadArgumentError('the PV name is empty');
    const ch = this.channels.get(name) ?? this.newChannel(name);
    ch.refs++;
    return ch;
  }

  private newChannel(name: string): Channel {
    // One pass over the name: no NUL, and its length on the wire.
    let ascii = true;
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c === 0) throw new BadArgumentError('the PV name contains a NUL character', name);
      if (c > 127) ascii = false;
    }
    const padded = ascii ? (name.length + 8) & ~7 : paddedLength(name);
    if (padded > MAX_NAME_BYTES + 1) {
      const bytes = new TextEncoder().encode(name).length;
      throw new BadArgumentError(`the PV name is ${bytes} bytes long; at most ${MAX_NAME_BYTES} fit a search request`, name);
    }
    const cid = this.nextCid;
    this.nextCid = (this.nextCid + 1) >>> 0 || 1;
    const ch = new Channel(this, cid, name, padded);
    this.channels.set(name, ch);
    this.searcher().add(ch);
    return ch;
  }

  /** @internal Many acquire() calls follow over several event-loop turns (see UdpSearcher.cork). */
  corkSearch(): void {
    if (!this.isClosed) this.searcher().cork();
  }

  /** @internal */
  uncorkSearch(): void {
    this.udp?.uncork();
  }

  /** @internal Drop a reference; a channel nobody holds stops searching (connected ones stay cached). */
  release(ch: Channel): void {
    ch.refs--;
    if (ch.refs > 0 || ch.state === 'connected' || ch.state === 'closed') return;
    this.forget(ch);
  }

  private forget(ch: Channel): void {
    this.udp?.remove(ch);
    this.channels.delete(ch.name);
    ch.transport?.circuit.clearChannel(ch, ch.state === 'connected' ? ch.sid : undefined);
    ch.close();
  }

  /** @internal */
  monitorClosed(m: Monitor): void {
    this.monitors.delete(m);
  }

  /** @internal The error a pending operation on `ch` fails with when its time is up. */
  timeoutError(ch: Channel): CaError {
    if (ch.state === 'connected') return new TimeoutError('no reply within the timeout', ch.name);
    if (ch.protocolError) return new ProtocolError(`the server broke the protocol: ${ch.protocolError}`, ch.name);
    if (ch.everConnected) return new DisconnectedError('the channel is disconnected', ch.name);
    if (ch.lastFailure) return new NotFoundError(`the server refused the channel: ${ch.lastFailure}`, ch.name);
    if (ch.state === 'connecting') return new TimeoutError('found, but the channel did not connect within the timeout', ch.name);
    return new NotFoundError('no server answered the search within the timeout', ch.name);
  }

  /** @internal */
  failError(reason: FailReason, name: string): CaError {
    if (reason.kind === 'disconnected') return new DisconnectedError(`the circuit was lost${reason.message ? ` (${reason.message})` : ''}`, name);
    if (reason.kind === 'protocol') return new ProtocolError(`protocol error from the server: ${reason.message}`, name);
    return new RemoteError(reason.status, reason.message, name);
  }

  /** @internal The largest array payload accepted. */
  get maxArrayBytes(): number {
    return this.config.maxArrayBytes;
  }

  private searcher(): UdpSearcher {
    if (!this.udp) this.udp = new UdpSearcher(this.config, (t, addr, port, from) => this.onFound(t, addr, port, from));
    return this.udp;
  }

  /** ChannelOwner: search again for a channel that lost its server. */
  research(ch: Channel): void {
    if (this.isClosed || ch.state === 'closed') return;
    if (ch.refs <= 0) {
      this.forget(ch);
      return;
    }
    this.searcher().add(ch, ch.researchDelayMs);
  }

  /** The circuit the last search answer pointed to (answers come in runs from one server). */
  private lastCircuit: TcpCircuit | undefined;
  private lastAddr = -1;
  private lastPort = -1;
  private lastFrom = '';

  private onFound(t: SearchTarget, addr: number, port: number, from: string): void {
    const ch = t as Channel;
    if (ch.state !== 'searching' || this.isClosed) return;
    const wildcard = addr === 0xffffffff || addr === 0;
    let c = this.lastCircuit;
    if (!c || !c.open || addr !== this.lastAddr || port !== this.lastPort || (wildcard && from !== this.lastFrom)) {
      const key = `${wildcard ? from : intToIpv4(addr)}:${port}`;
      c = this.circuits.get(key);
      if (!c) {
        c = new TcpCircuit(wildcard ? from : intToIpv4(addr), port, this.config, {
          onConnect: () => {},
          onClose: (tc, reason, detail) => this.onCircuitClose(tc, reason, detail),
        });
        this.circuits.set(key, c);
      }
      this.lastCircuit = c;
      this.lastAddr = addr;
      this.lastPort = port;
      this.lastFrom = from;
    }
    ch.state = 'connecting';
    ch.transport = c;
    c.circuit.createChannel(ch);
  }

  private onCircuitClose(t: TcpCircuit, reason: CloseReason, detail: string): void {
    if (this.circuits.get(t.key) === t) this.circuits.delete(t.key);
    if (this.lastCircuit === t) this.lastCircuit = undefined;
    if (reason !== 'closed' && log.isLevelEnabled('info')) log.info({ server: t.key, reason, detail }, 'circuit closed');
    const chans = t.circuit.close(
      reason === 'protocol' ? { kind: 'protocol', message: detail } : { kind: 'disconnected', message: `${reason}: ${detail}` },
    );
    const broken = reason === 'protocol' || reason === 'connect-failed';
    for (const c of chans as Channel[]) {
      if (reason === 'protocol') c.protocolError = detail;
      c.researchDelayMs = broken ? Math.min(Math.max(c.researchDelayMs * 2, 250), 5000) : 0;
      c.lost();
    }
  }

  /** Diagnostics: number of open circuits, channels, and names still searching. */
  stats(): { circuits: number; channels: number; searching: number; datagramsSent: number } {
    return {
      circuits: this.circuits.size,
      channels: this.channels.size,
      searching: this.udp?.searching ?? 0,
      datagramsSent: this.udp?.datagramsSent ?? 0,
    };
  }
}

