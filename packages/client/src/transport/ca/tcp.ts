// One CA virtual circuit on a StreamConnection: reads straight into the framer (large payloads
// land in their final buffer, pooled), the ECHO request of the watchdog (EPICS_CA_CONN_TMO), and
// EVENTS_OFF/EVENTS_ON flow control when reads fall behind.
import { ClientCircuit } from '../../ca/circuit.js';
import { Framer } from '../../ca/framer.js';
import type { CaConfig } from './config.js';
import { BufferPool } from '../buffer-pool.js';
import { StreamConnection, type CloseReason } from '../stream.js';

export type { CloseReason };

/** Consecutive full reads (the kernel has more queued) before asking the server to pause events. */
const FLOW_CONTROL_THRESHOLD = 10;

export interface CircuitHandlers {
  onConnect(t: TcpCircuit): void;
  onClose(t: TcpCircuit, reason: CloseReason, detail: string): void;
  /** The server told its minor protocol version. */
  onVersion?(t: TcpCircuit, minor: number): void;
  /** A SEARCH reply came over the circuit (a name server's; see ClientCircuit's searchReply). */
  onSearchReply?(t: TcpCircuit, cid: number, address: number, port: number): void;
}

export class TcpCircuit extends StreamConnection {
  readonly circuit: ClientCircuit;
  private readonly framer: Framer;
  private fullReads = 0;
  private eventsOff = false;

  constructor(
    host: string,
    port: number,
    config: CaConfig,
    private readonly handlers: CircuitHandlers,
  ) {
    super(host, port, config.connTimeoutMs, 'ECHO');
    this.circuit = new ClientCircuit({
      wantFlush: () => this.scheduleFlush(),
      protocolError: (reason) => this.fail('protocol', reason),
      version: (minor) => this.handlers.onVersion?.(this, minor),
      searchReply: (cid, address, port) => this.handlers.onSearchReply?.(this, cid, address, port),
    });
    this.framer = new Framer(
      (h, p, owned, hostOrder) => this.circuit.receive(h, p, owned, hostOrder),
      (reason) => this.fail('protocol', reason),
      config.maxArrayBytes + 1024,
      (size) => this.allocate(size),
      { swapArrays: true, inPlace: (h, bytes, offset) => this.circuit.receiveAt(h, bytes, offset) },
    );
    this.circuit.hello(0, config.hostName, config.clientName);
  }

  protected override socketConnected(): void {
    this.handlers.onConnect(this);
  }

  /** Large payload buffers handed back by their consumer, reused for the next large payload. */
  private readonly pool = new BufferPool();

  private allocate(size: number): Uint8Array {
    return new Uint8Array(this.pool.take(size), 0, size);
  }

  /** Give back a large payload buffer nobody uses any more (a monitor that does not keep arrays). */
  recycle(payload: Uint8Array): void {
    if (payload.byteOffset === 0) this.pool.give(payload.buffer as ArrayBuffer);
  }

  protected directTarget(): Uint8Array | undefined {
    return this.framer.directTarget();
  }

  protected commitDirect(n: number): void {
    // A large payload is arriving straight into its buffer: not a sign of falling behind (and
    // the chunk read that brought its header must not count towards flow control either).
    this.fullReads = 0;
    this.framer.commitDirect(n);
  }

  protected received(bytes: Uint8Array, full: boolean): void {
    this.framer.push(bytes);
    // Flow control: many consecutive full reads mean we are behind the server.
    if (full) {
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
  }

  protected take(): Uint8Array | undefined {
    return this.circuit.take();
  }

  protected sendEcho(): void {
    this.circuit.send({ type: 'EchoRequest' });
  }

  protected stopReading(): void {
    this.framer.stop();
  }

  protected ended(reason: CloseReason, detail: string): void {
    this.handlers.onClose(this, reason, detail);
  }
}
