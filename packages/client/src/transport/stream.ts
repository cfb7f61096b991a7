// One client TCP connection, whatever its protocol: the socket and its reads (straight into the
// protocol's own buffer when it asks), one coalesced write per event-loop turn (or sooner, when
// the protocol flushes its pending writes itself), the limit on connecting and the echo watchdog
// (the CONN_TMO of either protocol), and closing exactly once.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import tls, { type ConnectionOptions } from 'node:tls';
import { hostPort } from './addresses.js';

export type CloseReason = 'closed' | 'connect-failed' | 'disconnected' | 'protocol' | 'unresponsive' | 'tls';

/** Codes of Node's TLS errors: a handshake or certificate failure rather than a lost connection. */
function isTlsFailure(err: NodeJS.ErrnoException): boolean {
  const code = err.code ?? '';
  return code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|_SIGNATURE|ISSUER|SELF_SIGNED/.test(code);
}

/** Milliseconds to wait for an echo reply before the connection is declared unresponsive (libca: 5 s). */
const ECHO_TIMEOUT_MS = 5000;
const READ_CHUNK = 64 * 1024;
/** TLS reads shorter than this are gathered for the end of the turn; longer ones are decoded at once. */
const HOLD_BELOW = 2048;
/** A buffer of gathered TLS records larger than this is not kept after its turn. */
const HELD_KEEP = 256 * 1024;

export abstract class StreamConnection {
  readonly key: string;
  /** True once the socket connected. */
  connected = false;
  private readonly socket: net.Socket;
  /** The TLS error code that closed the connection (a failed handshake, a refused certificate). */
  tlsCode: string | undefined;
  /** The reused buffer of ordinary reads. */
  private readonly chunk = new Uint8Array(READ_CHUNK);
  /**
   * Over TLS every record is a read of its own (a server that writes each update as a record of
   * its own: a callback per update). Short reads are gathered here and decoded once a turn; a
   * long one (a large message's, read straight into it) first decodes those before it.
   */
  private held: Uint8Array | undefined;
  private heldLength = 0;
  private drainScheduled = false;
  private flushScheduled = false;
  private closed = false;
  private lastRx = performance.now();
  private echoSentAt = 0;
  private watchdog: NodeJS.Timeout | undefined;
  /** Gives up a connection (TCP, and TLS's handshake) not made in time. */
  private connectTimer: NodeJS.Timeout | undefined;
  private tcpConnected = false;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly connTimeoutMs: number,
    private readonly echoName: string,
    /** Speak TLS with these settings (Secure PV Access). */
    readonly secure?: ConnectionOptions,
  ) {
    this.key = hostPort(host, port); // [ip6]:port for IPv6 (node:net takes the host without brackets)
    // (The socket asks for its first buffer here, before the protocol's constructor has run.)
    const onread = {
      buffer: () => (this.connected && this.heldLength === 0 ? this.directTarget() : undefined) ?? this.chunk,
      callback: (n: number, buf: Uint8Array) => this.onRead(n, buf),
    };
    // A TLS socket takes `onread` as a plain one does (Node's types leave it out of tls.connect's options).
    const secureOptions: ConnectionOptions & { onread?: typeof onread } = { ...secure, host, port, onread };
    this.socket = secure ? tls.connect(secureOptions) : net.connect({ host, port, noDelay: true, onread });
    if (secure) this.socket.setNoDelay(true);
    this.socket.once('connect', () => (this.tcpConnected = true));
    this.socket.on(secure ? 'secureConnect' : 'connect', () => {
      this.connected = true;
      clearTimeout(this.connectTimer);
      this.lastRx = performance.now();
      this.armWatchdog();
      this.socketConnected();
    });
    this.socket.on('error', (err) => {
      if (secure && isTlsFailure(err)) {
        this.tlsCode = (err as NodeJS.ErrnoException).code;
        return this.fail('tls', err.message);
      }
      this.fail(this.connected ? 'disconnected' : 'connect-failed', err.message);
    });
    this.socket.on('close', () => this.fail(this.connected ? 'disconnected' : 'connect-failed', 'connection closed by the server'));
    this.limitConnect(connTimeoutMs);
  }

  // ---- what the protocol provides ----

  /** Where the next read may land directly (the rest of a large incomplete message), or undefined. */
  protected abstract directTarget(): Uint8Array | undefined;
  /** `n` bytes were read into the last directTarget(). */
  protected abstract commitDirect(n: number): void;
  /** Bytes read into the ordinary buffer (valid only during the call); `full` when the read filled it. */
  protected abstract received(bytes: Uint8Array, full: boolean): void;
  /** Everything queued to write, or undefined. */
  protected abstract take(): Uint8Array | undefined;
  /** Queue an echo request (the connection has been quiet for CONN_TMO). */
  protected abstract sendEcho(): void;
  /** Stop decoding (the connection is closing). */
  protected abstract stopReading(): void;
  /** The connection closed, once, for `reason`. */
  protected abstract ended(reason: CloseReason, detail: string): void;
  /** The socket connected. */
  protected socketConnected(): void {}

  /** Over TLS: the common name of the server's certificate, once connected. */
  get peerName(): string | undefined {
    if (!(this.socket instanceof tls.TLSSocket)) return undefined;
    const subject = this.socket.getPeerCertificate()?.subject as Record<string, string> | undefined;
    return subject?.CN;
  }

  /** The address the socket connected to (the host's, resolved), or undefined before it connected. */
  get remoteAddress(): string | undefined {
    return this.socket.remoteAddress;
  }

  /**
   * Give up a connection not made within `ms` (CONN_TMO unless a shorter limit is set): a host that
   * does not answer, or a TLS handshake that does not complete. It fails as connect-failed, and its
   * channels search again with back-off.
   */
  limitConnect(ms: number): void {
    clearTimeout(this.connectTimer);
    if (this.connected || this.closed) return;
    this.connectTimer = setTimeout(() => {
      const what = this.tcpConnected ? 'TLS handshake completed' : 'connection';
      this.fail('connect-failed', `no ${what} within ${ms / 1000} s`);
    }, ms);
    this.connectTimer.unref();
  }

  /** False once the connection closed (either side). */
  get open(): boolean {
    return !this.closed;
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    this.lastRx = performance.now();
    if (this.closed) return false;
    if (buf !== this.chunk) this.commitDirect(n);
    else if (this.secure && n < HOLD_BELOW) this.hold(buf, n);
    else {
      if (this.heldLength) this.drain();
      this.received(n === buf.length ? buf : buf.subarray(0, n), n === buf.length);
    }
    return true;
  }

  /** Keep a TLS read for the end of the turn (reads land directly again once none is kept). */
  private hold(buf: Uint8Array, n: number): void {
    const at = this.heldLength;
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        if (this.heldLength) this.drain();
      });
    }
    if (!this.held || this.held.length < at + n) {
      const bigger = new Uint8Array(Math.max(READ_CHUNK, 2 * (at + n)));
      if (this.held) bigger.set(this.held.subarray(0, at));
      this.held = bigger;
    }
    this.held.set(buf.subarray(0, n), at);
    this.heldLength = at + n;
  }

  private drain(): void {
    const bytes = this.held!.subarray(0, this.heldLength);
    this.heldLength = 0;
    if (this.held!.length > HELD_KEEP) this.held = undefined;
    if (!this.closed) this.received(bytes, false);
  }

  /** Write what is queued once the caller's synchronous work is done. */
  protected scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    process.nextTick(() => this.flush());
  }

  /** Write now what a scheduled flush would write at the end of the turn. */
  protected flushPending(): void {
    if (this.flushScheduled) this.flush();
  }

  /** Write everything queued in one socket write. */
  flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    const bytes = this.take();
    if (bytes) this.socket.write(bytes);
  }

  private armWatchdog(): void {
    const period = Math.max(100, Math.min(this.connTimeoutMs, ECHO_TIMEOUT_MS) / 2);
    this.watchdog = setInterval(() => this.checkAlive(), period);
    this.watchdog.unref();
  }

  private checkAlive(): void {
    const now = performance.now();
    const limit = Math.min(ECHO_TIMEOUT_MS, this.connTimeoutMs);
    if (this.echoSentAt) {
      if (this.lastRx >= this.echoSentAt) this.echoSentAt = 0;
      else if (now - this.echoSentAt > limit) this.fail('unresponsive', `no reply to ${this.echoName} within ${Math.round(limit)} ms`);
      return;
    }
    if (now - this.lastRx >= this.connTimeoutMs) {
      this.echoSentAt = now;
      this.sendEcho();
    }
  }

  /** Close at once for `reason` (an error of the socket or of the protocol). */
  protected fail(reason: CloseReason, detail: string): void {
    if (this.closed) return;
    this.closed = true;
    this.stopReading();
    clearTimeout(this.connectTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    this.socket.destroy();
    this.ended(reason, detail);
  }

  /** Close on our side (the Context is closing, or nothing uses the connection): what is queued is written first. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.stopReading();
    clearTimeout(this.connectTimer);
    if (this.watchdog) clearInterval(this.watchdog);
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.ended('closed', 'closed by the client');
  }
}
