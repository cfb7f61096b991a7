// One PV Access TCP connection: the socket, the framer, one coalesced write per event-loop turn,
// and the echo watchdog (EPICS_PVA_CONN_TMO); the protocol state is its ClientSession.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Framer } from '../pva/framer.js';
import { ClientSession, type SessionEvents } from '../pva/session.js';
import type { Status } from '../pva/status.js';
import type { PvaConfig } from './pva-config.js';
import type { CloseReason } from './tcp.js';

/** Seconds to wait for an echo reply before the connection is declared unresponsive. */
const ECHO_TIMEOUT_MS = 5000;
const READ_CHUNK = 64 * 1024;
/** Largest message (joined segments included) accepted from a server. */
const MAX_MESSAGE = 256 * 1024 * 1024;

export interface PvaCircuitHandlers {
  onReady(c: PvaCircuit): void;
  onClose(c: PvaCircuit, reason: CloseReason, detail: string): void;
  searchResponse?: SessionEvents['searchResponse'];
}

export class PvaCircuit {
  readonly session: ClientSession;
  readonly key: string;
  private readonly socket: net.Socket;
  private readonly framer: Framer;
  private connected = false;
  private flushScheduled = false;
  private closed = false;
  private lastRx = performance.now();
  private echoSentAt = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private readonly chunk = new Uint8Array(READ_CHUNK);

  constructor(readonly host: string, readonly port: number, private readonly config: PvaConfig, private readonly handlers: PvaCircuitHandlers) {
    this.key = `${host}:${port}`;
    const events: SessionEvents = {
      wantFlush: () => this.scheduleFlush(),
      protocolError: (reason) => this.fail('protocol', reason),
      validated: (status) => this.onValidated(status),
    };
    if (handlers.searchResponse) events.searchResponse = handlers.searchResponse;
    this.session = new ClientSession(events, config.user, config.host);
    this.framer = new Framer((h, p) => this.session.receive(h, p), (reason) => this.fail('protocol', reason), MAX_MESSAGE);
    // Reads land in one reused buffer (the framer copies only what it must keep).
    this.socket = net.connect({
      host, port, noDelay: true,
      onread: { buffer: this.chunk, callback: (n, buf) => this.onRead(n, buf) },
    });
    this.socket.on('connect', () => {
      this.connected = true;
      this.lastRx = performance.now();
      this.armWatchdog();
    });
    this.socket.on('error', (err) => this.fail(this.connected ? 'disconnected' : 'connect-failed', err.message));
    this.socket.on('close', () => this.fail(this.connected ? 'disconnected' : 'connect-failed', 'connection closed by the server'));
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    this.lastRx = performance.now();
    if (this.closed) return true;
    this.framer.push(n === buf.length ? buf : buf.subarray(0, n));
    // What the replies of this chunk asked for goes out now, not at the end of the turn: the
    // server works on it while the client reads the next chunk (one event-loop turn may read
    // many chunks of thousands of replies).
    if (this.flushScheduled) this.flush();
    return true;
  }

  get open(): boolean {
    return !this.closed;
  }

  get ready(): boolean {
    return !this.closed && this.session.ready;
  }

  private onValidated(status: Status): void {
    if (status.type >= 2) return this.fail('protocol', `connection validation refused: ${status.message}`);
    this.handlers.onReady(this);
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /** Write everything queued in one socket write. */
  flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const bytes = this.session.take();
    if (bytes) this.socket.write(bytes);
  }

  private armWatchdog(): void {
    const period = Math.max(100, Math.min(this.config.connTimeoutMs, ECHO_TIMEOUT_MS) / 2);
    this.watchdog = setInterval(() => this.checkAlive(), period);
    this.watchdog.unref();
  }

  private checkAlive(): void {
    const now = performance.now();
    const limit = Math.min(ECHO_TIMEOUT_MS, this.config.connTimeoutMs);
    if (this.echoSentAt) {
      if (this.lastRx >= this.echoSentAt) this.echoSentAt = 0;
      else if (now - this.echoSentAt > limit) this.fail('unresponsive', `no reply to echo within ${Math.round(limit)} ms`);
      return;
    }
    if (now - this.lastRx >= this.config.connTimeoutMs) {
      this.echoSentAt = now;
      this.session.echo();
    }
  }

  private fail(reason: CloseReason, detail: string): void {
    if (this.closed) return;
    this.closed = true;
    this.framer.stop();
    if (this.watchdog) clearInterval(this.watchdog);
    this.socket.destroy();
    this.handlers.onClose(this, reason, detail);
  }

  /** Close on our side (the Context is closing). */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.framer.stop();
    if (this.watchdog) clearInterval(this.watchdog);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.handlers.onClose(this, 'closed', 'closed by the client');
  }
}
