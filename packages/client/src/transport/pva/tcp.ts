// One PV Access TCP connection on a StreamConnection: the framer (large messages are read
// straight into their own buffer), the echo of the watchdog (EPICS_PVA_CONN_TMO), and the
// validation handshake; the protocol state is its ClientSession.
import { Framer } from '../../pva/framer.js';
import { ClientSession, type SessionEvents } from '../../pva/session.js';
import { UpdateBuffers, type Views } from '../../pva/update-buffers.js';
import type { Status } from '../../pva/status.js';
import type { PvaConfig } from './config.js';
import { BufferPool } from '../buffer-pool.js';
import { StreamConnection, type CloseReason } from '../stream.js';
import type { PvaTls } from './tls.js';

/** Largest message (joined segments included) accepted from a server. */
const MAX_MESSAGE = 256 * 1024 * 1024;

export interface PvaCircuitHandlers {
  onReady(c: PvaCircuit): void;
  onClose(c: PvaCircuit, reason: CloseReason, detail: string): void;
  searchResponse?: SessionEvents['searchResponse'];
}

export class PvaCircuit extends StreamConnection {
  readonly session: ClientSession;
  /** The server ignored a pipelined MONITOR (core-pva's does): this connection's monitors go plain. */
  pipelineIgnored = false;
  private readonly framer: Framer;
  /** Large message buffers handed back by their consumer, reused for the next large message. */
  private readonly pool = new BufferPool();
  /** Buffers of monitors' last updates, each for its monitor's next update if that replaces all it holds. */
  private readonly updates = new UpdateBuffers();

  constructor(
    host: string,
    port: number,
    config: PvaConfig,
    private readonly handlers: PvaCircuitHandlers,
    /** Secure PV Access: connect over TLS with these settings. */
    readonly tlsSettings?: PvaTls,
  ) {
    super(host, port, config.connTimeoutMs, 'echo', tlsSettings?.options);
    const events: SessionEvents = {
      wantFlush: () => this.scheduleFlush(),
      protocolError: (reason) => this.fail('protocol', reason),
      validated: (status) => this.onValidated(status),
    };
    if (handlers.searchResponse) events.searchResponse = handlers.searchResponse;
    this.session = new ClientSession(events, config.user, config.host, tlsSettings?.identity !== undefined);
    this.framer = new Framer(
      (h, p, owned) => this.session.receive(h, p, owned),
      (reason) => this.fail('protocol', reason),
      MAX_MESSAGE,
      (size, prefix) => this.updates.take(size, prefix) ?? this.pool.take(size),
      (h, bytes, start, end) => this.session.receiveAt(h, bytes, start, end),
    );
  }

  get ready(): boolean {
    return this.open && this.session.ready;
  }

  private onValidated(status: Status): void {
    if (status.type >= 2) return this.fail('protocol', `connection validation refused: ${status.message}`);
    this.handlers.onReady(this);
  }

  protected directTarget(): Uint8Array | undefined {
    return this.framer.directTarget();
  }

  protected commitDirect(n: number): void {
    this.framer.commitDirect(n);
  }

  protected received(bytes: Uint8Array): void {
    // The framer copies only what it must keep (an incomplete message).
    this.framer.push(bytes);
    // What the replies of this chunk asked for goes out now, not at the end of the turn: the
    // server works on it while the client reads the next chunk (one event-loop turn may read
    // many chunks of thousands of replies).
    this.flushPending();
  }

  /** A large message's buffer that nothing views any more: the next large message is read into it. */
  recycle(buffer: ArrayBuffer): void {
    this.pool.give(buffer);
  }

  /**
   * Monitor `requestId`'s last update's large arrays view these buffers (src/pva/update-buffers.ts),
   * and its callback has returned: its next large update is read into one whose arrays it replaces.
   */
  offerUpdate(requestId: number, views: Views): void {
    this.updates.offer(requestId, views);
  }

  /** Monitor `requestId` offers no buffer (any more). */
  withdrawUpdate(requestId: number): void {
    this.updates.withdraw(requestId);
  }

  protected take(): Uint8Array | undefined {
    return this.session.take();
  }

  protected sendEcho(): void {
    this.session.echo();
  }

  protected stopReading(): void {
    this.framer.stop();
  }

  protected ended(reason: CloseReason, detail: string): void {
    this.handlers.onClose(this, reason, detail);
  }
}
