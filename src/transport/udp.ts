// The UDP name resolver: one socket per Context; many names per datagram; a window of datagrams
// in flight (a reply's VERSION sequence number frees its slot) so bursts do not overflow the
// server's receive buffer; per-name retries with a doubling backoff; first answer wins.
import dgram from 'node:dgram';
import { Cmd, HEADER_SIZE, MAX_SEARCH_DATAGRAM } from '../ca/constants.js';
import { buildSearchDatagrams, intToIpv4, searchRetryDelay } from '../ca/search.js';
import type { CaConfig } from './config.js';

interface Pending {
  cid: number;
  name: string;
  paddedLength: number;
  attempt: number;
  dueAt: number;
  queued: boolean;
}

export type FoundHandler = (cid: number, host: string, port: number, version: number) => void;

/** How long a datagram holds a window slot when no reply names it (all its names missing). */
const SLOT_EXPIRY_MS = 20;

export class UdpSearcher {
  private socket: dgram.Socket | undefined;
  private readonly pending = new Map<number, Pending>();
  private queue: Pending[] = [];
  private qHead = 0;
  private readonly inFlight = new Map<number, number>();
  private sequence = 1;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private nextDue = Infinity;
  private closed = false;
  /** Datagrams sent (for diagnostics and tests). */
  datagramsSent = 0;

  constructor(private readonly config: CaConfig, private readonly onFound: FoundHandler) {}

  private open(): dgram.Socket {
    if (this.socket) return this.socket;
    const s = dgram.createSocket({ type: 'udp4' });
    this.socket = s;
    s.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    s.on('error', () => {
      // Send errors (e.g. ICMP port unreachable) are expected when no server listens.
    });
    // Sends made before the bind completes are queued by Node and go out once bound.
    s.bind(0);
    return s;
  }

  /** Start (or restart, after a disconnect) searching for a name. */
  add(cid: number, name: string, paddedLength: number, delayMs = 0): void {
    if (this.closed) return;
    const now = performance.now();
    let p = this.pending.get(cid);
    if (!p) {
      p = { cid, name, paddedLength, attempt: 0, dueAt: now + delayMs, queued: false };
      this.pending.set(cid, p);
    } else {
      p.attempt = 0;
      p.dueAt = now + delayMs;
    }
    if (delayMs > 0) {
      // Later (e.g. after a circuit to that server failed): the due scan picks it up.
      if (p.dueAt < this.nextDue) this.nextDue = p.dueAt;
      this.schedule(delayMs);
      return;
    }
    if (!p.queued) {
      p.queued = true;
      this.queue.push(p);
    }
    // A full datagram's worth waiting and room in the window: send now, while the caller is
    // still adding names (the server works on these meanwhile).
    if (this.queue.length - this.qHead >= 48 && this.inFlight.size < this.config.searchWindow) this.sendDue();
    else this.schedule(0);
  }

  /** Stop searching for a name (found elsewhere, or no longer wanted). */
  remove(cid: number): void {
    const p = this.pending.get(cid);
    if (!p) return;
    this.pending.delete(cid);
    p.queued = false; // stays in the queue array but is skipped
  }

  get searching(): number {
    return this.pending.size;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    const at = performance.now() + delayMs;
    if (this.timer && at >= this.timerAt - 1) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      this.pump();
    }, delayMs);
  }

  private pump(): void {
    if (this.closed) return;
    this.sendDue();
  }

  private sendDue(): void {
    if (this.closed) return;
    const socket = this.open();
    const now = performance.now();
    if (this.inFlight.size) for (const [seq, at] of this.inFlight) if (now - at > SLOT_EXPIRY_MS) this.inFlight.delete(seq);
    // Names whose retry is due join the queue (scan only when something can be due).
    let next = this.nextDue;
    if (now >= this.nextDue) {
      next = Infinity;
      for (const p of this.pending.values()) {
        if (p.queued) continue;
        if (p.dueAt <= now) {
          p.queued = true;
          this.queue.push(p);
        } else if (p.dueAt < next) next = p.dueAt;
      }
    }
    const window = this.config.searchWindow;
    const q = this.queue;
    let qi = this.qHead;
    while (qi < q.length && this.inFlight.size < window) {
      // Take as many names as fit one datagram (the same sizing buildSearchDatagrams uses).
      const batch: Pending[] = [];
      let bytes = 2 * HEADER_SIZE;
      while (qi < q.length) {
        const p = q[qi]!;
        if (!p.queued || this.pending.get(p.cid) !== p) {
          qi++;
          continue;
        }
        const size = HEADER_SIZE + p.paddedLength;
        if (bytes + size > MAX_SEARCH_DATAGRAM && batch.length) break;
        bytes += size;
        batch.push(p);
        qi++;
      }
      if (!batch.length) break;
      const gram = buildSearchDatagrams(batch, this.sequence)[0];
      if (!gram) break;
      this.sequence = (gram.sequence + 1) >>> 0 || 1;
      this.inFlight.set(gram.sequence, now);
      for (const d of this.config.searchDestinations) socket.send(gram.bytes, d.port, d.host);
      this.datagramsSent++;
      for (const p of batch) {
        p.queued = false;
        p.dueAt = now + searchRetryDelay(p.attempt, this.config.maxSearchPeriodMs);
        p.attempt++;
        if (p.dueAt < next) next = p.dueAt;
      }
    }
    this.nextDue = next;
    if (qi >= q.length) {
      this.queue = [];
    this.qHead = 0;
      this.qHead = 0;
    } else if (qi > 1024 && qi * 2 > q.length) {
      this.queue = q.slice(qi);
      this.qHead = 0;
    } else this.qHead = qi;
    if (this.queue.length > this.qHead) this.schedule(SLOT_EXPIRY_MS);
    else if (next !== Infinity) this.schedule(Math.max(1, next - now));
  }

  private onMessage(msg: Buffer, from: string): void {
    // Walk the datagram's headers in place (a reply carries dozens of SEARCH answers).
    let answered = false;
    let pos = 0;
    const len = msg.length;
    while (pos + HEADER_SIZE <= len) {
      const cmd = msg.readUInt16BE(pos);
      const size = msg.readUInt16BE(pos + 2);
      if (size === 0xffff || pos + HEADER_SIZE + size > len) break; // malformed: ignore the rest
      if (cmd === Cmd.VERSION) {
        // The server answered that datagram: its slot is free (it may have expired already).
        this.inFlight.delete(msg.readUInt32BE(pos + 8));
        answered = true;
      } else if (cmd === Cmd.SEARCH) {
        const cid = msg.readUInt32BE(pos + 12);
        const p = this.pending.get(cid);
        if (p) {
          // First answer wins: later ones find nothing pending.
          this.pending.delete(cid);
          p.queued = false;
          const addr = msg.readUInt32BE(pos + 8);
          const port = msg.readUInt16BE(pos + 4);
          const version = size >= 2 ? msg.readUInt16BE(pos + HEADER_SIZE) : 0;
          this.onFound(cid, addr === 0xffffffff || addr === 0 ? from : intToIpv4(addr), port, version);
        }
      }
      pos += HEADER_SIZE + size;
    }
    if (answered && this.queue.length > this.qHead) this.sendDue();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.queue = [];
    this.qHead = 0;
    const s = this.socket;
    this.socket = undefined;
    if (s) {
      try {
        s.close();
      } catch {
        // already closed
      }
    }
  }
}
