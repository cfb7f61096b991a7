// One TCP virtual circuit: the socket, reads straight into the framer (large payloads land in
// their final buffer), one coalesced write per event-loop turn, the ECHO watchdog
// (EPICS_CA_CONN_TMO), and EVENTS_OFF/EVENTS_ON flow control when reads fall behind.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { ClientCircuit } from '../ca/circuit.js';
import { Framer } from '../ca/framer.js';
import { installSwappers } from '../ca/swap.js';
import type { CaConfig } from './config.js';

installSwappers({
  swap16: (b) => void Buffer.from(b.buffer, b.byteOffset, b.length).swap16(),
  swap32: (b) => void Buffer.from(b.buffer, b.byteOffset, b.length).swap32(),
  swap64: (b) => void Buffer.from(b.buffer, b.byteOffset, b.length).swap64(),
});

const READ_CHUNK = 64 * 1024;
/** Payloads from this size up are pooled when their consumer gives them back. */
const LARGE_PAYLOAD = 1 << 20;
/** Seconds to wait for an ECHO reply before the circuit is declared unresponsive (libca: 5 s). */
const ECHO_TIMEOUT_MS = 5000;
/** Consecutive full reads (the kernel has more queued) before asking the server to pause events. */
const FLOW_CONTROL_THRESHOLD = 10;

export type CloseReason = 'closed' | 'connect-failed' | 'disconnected' | 'protocol' | 'unresponsive';

export interface CircuitHandlers {
  onConnect(t: TcpCircuit): void;
  onClose(t: TcpCircuit, reason: CloseReason, detail: string): void;
}

export class TcpCircuit {
  readonly circuit: ClientCircuit;
  readonly key: string;
  connected = false;
  private readonly socket: net.Socket;
  private readonly framer: Framer;
  private readonly chunk = new Uint8Array(READ_CHUNK);
  private flushScheduled = false;
  private closed = false;
  private lastRx = performance.now();
  private echoSentAt = 0;
  private watchdog: NodeJS.Timeout | undefined;
  private fullReads = 0;
  private eventsOff = false;

  constructor(readonly host: string, readonly port: number, private readonly config: CaConfig, private readonly handlers: CircuitHandlers) {
    this.key = `${host}:${port}`;
    this.circuit = new ClientCircuit({
      wantFlush: () => this.scheduleFlush(),
      protocolError: (reason) => this.fail('protocol', reason),
    });
    this.framer = new Framer(
      (h, p, owned, hostOrder) => this.circuit.receive(h, p, owned, hostOrder),
      (reason) => this.fail('protocol', reason),
      config.maxArrayBytes + 1024,
      (size) => this.allocate(size),
      { swapArrays: true },
    );
    this.circuit.hello(0, config.hostName, config.clientName);
    this.socket = net.connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: () => this.nextReadBuffer(), callback: (n, buf) => this.onRead(n, buf) },
    });
    this.socket.on('connect', () => {
      this.connected = true;
      this.lastRx = performance.now();
      this.armWatchdog();
      this.handlers.onConnect(this);
    });
    this.socket.on('error', (err) => this.fail(this.connected ? 'disconnected' : 'connect-failed', err.message));
    this.socket.on('close', () => this.fail(this.connected ? 'disconnected' : 'connect-failed', 'connection closed by the server'));
  }

  /** False once the circuit closed (either side). */
  get open(): boolean {
    return !this.closed;
  }

  /** Large payload buffers handed back by their consumer, reused for the next large payload. */
  private readonly pool: Uint8Array[] = [];

  private allocate(size: number): Uint8Array {
    if (size >= LARGE_PAYLOAD) {
      for (let i = 0; i < this.pool.length; i++) {
        const b = this.pool[i]!;
        if (b.length >= size && b.length <= size * 2) {
          this.pool.splice(i, 1);
          return b.subarray(0, size);
        }
      }
    }
    // Not zero-filled: every byte is overwritten by the payload before anyone reads it.
    const b = Buffer.allocUnsafeSlow(size);
    return new Uint8Array(b.buffer, b.byteOffset, size);
  }

  /** Give back a large payload buffer nobody uses any more (a monitor that does not keep arrays). */
  recycle(payload: Uint8Array): void {
    if (payload.byteOffset !== 0 || payload.buffer.byteLength < LARGE_PAYLOAD || this.pool.length >= 2) return;
    this.pool.push(new Uint8Array(payload.buffer));
  }

  private nextReadBuffer(): Uint8Array {
    return this.framer.directTarget() ?? this.chunk;
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    this.lastRx = performance.now();
    if (this.closed) return false;
    if (buf !== this.chunk) {
      // A large payload is arriving straight into its buffer: not a sign of falling behind (and
      // the chunk read that brought its header must not count towards flow control either).
      this.fullReads = 0;
      this.framer.commitDirect(n);
      return true;
    }
    this.framer.push(n === buf.length ? buf : buf.subarray(0, n));
    // Flow control: many consecutive full reads mean we are behind the server.
    if (n === buf.length) {
      if (++this.fullReads >= FLOW_CONTROL_THRESHOLD && !this.eventsOff) {
        this.eventsOff = true;
        this.circuit.send({ type: 'EventsOffRequest' });
      }
    } else {
      this.fullReads = 0;
      if (this.eventsOff) {
        this.eventsOff = false;
        this.circuit.send({ type: 'EventsOnRequest' });
      }
    }
    return true;
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
    const bytes = this.circuit.take();
    if (bytes) this.socket.write(bytes);
  }

  private armWatchdog(): void {
    const period = Math.max(100, Math.min(this.config.connTimeoutMs, ECHO_TIMEOUT_MS) / 2);
    this.watchdog = setInterval(() => this.checkAlive(), period);
    this.watchdog.unref();
  }

  private checkAlive(): void {
    const now = performance.now();
    if (this.echoSentAt) {
      if (this.lastRx >= this.echoSentAt) this.echoSentAt = 0;
      else if (now - this.echoSentAt > Math.min(ECHO_TIMEOUT_MS, this.config.connTimeoutMs)) {
        this.fail('unresponsive', `no reply to ECHO within ${ECHO_TIMEOUT_MS} ms`);
      }
      return;
    }
    if (now - this.lastRx >= this.config.connTimeoutMs) {
      this.echoSentAt = now;
      this.circuit.send({ type: 'EchoRequest' });
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

  /** Close on our side (the Context is closing or no channel uses this circuit). */
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
