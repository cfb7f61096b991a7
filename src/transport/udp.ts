// The UDP name resolver: one socket per Context; many names per datagram; a window of datagrams
// in flight (a reply's VERSION sequence number frees its slot) so bursts do not overflow the
// server's receive buffer; per-name retries with a doubling backoff; first answer wins.
import dgram from 'node:dgram';
import { buildSearchDatagrams, intToIpv4, parseDatagram, searchRetryDelay } from '../ca/search.js';
import type { CaConfig } from './config.js';

interface Pending {
  cid: number;
  name: string;
  attempt: number;
  dueAt: number;
  queued: boolean;
}

export type FoundHandler = (cid: number, host: string, port: number, version: number) => void;

/** How long a datagram holds a window slot when no reply names it (all its names missing). */
const SLOT_EXPIRY_MS = 15;

export class UdpSearcher {
  private socket: dgram.Socket | undefined;
  private ready: Promise<void> | undefined;
  private readonly pending = new Map<number, Pending>();
  private queue: Pending[] = [];
  private readonly inFlight = new Map<number, number>();
  private sequence = 1;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private pumping = false;
  private nextDue = Infinity;
  private closed = false;
  /** Datagrams sent (for diagnostics and tests). */
  datagramsSent = 0;

  constructor(private readonly config: CaConfig, private readonly onFound: FoundHandler) {}

  private open(): Promise<void> {
    if (this.ready) return this.ready;
    const s = dgram.createSocket({ type: 'udp4' });
    this.socket = s;
    s.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    s.on('error', () => {
      // Send errors (e.g. ICMP port unreachable) are expected when no server listens.
    });
    this.ready = new Promise((resolve) => s.bind(0, () => resolve()));
    return this.ready;
  }

  /** Start (or restart, after a disconnect) searching for a name. */
  add(cid: number, name: string): void {
    if (this.closed) return;
    const now = performance.now();
    let p = this.pending.get(cid);
    if (!p) {
      p = { cid, name, attempt: 0, dueAt: now, queued: false };
      this.pending.set(cid, p);
    } else {
      p.attempt = 0;
      p.dueAt = now;
    }
    if (!p.queued) {
      p.queued = true;
      this.queue.push(p);
    }
    this.schedule(0);
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
      void this.pump();
    }, delayMs);
  }

  private async pump(): Promise<void> {
    if (this.pumping || this.closed) return;
    this.pumping = true;
    try {
      await this.open();
      this.sendDue();
    } finally {
      this.pumping = false;
    }
  }

  private sendDue(): void {
    const now = performance.now();
    for (const [seq, at] of this.inFlight) if (now - at > SLOT_EXPIRY_MS) this.inFlight.delete(seq);
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
    let qi = 0;
    const q = this.queue;
    while (qi < q.length && this.inFlight.size < window) {
      // Take names for one datagram (the builder packs as many as fit).
      const batch: Pending[] = [];
      while (qi < q.length && batch.length < 200) {
        const p = q[qi++]!;
        if (p.queued && this.pending.get(p.cid) === p) batch.push(p);
      }
      if (!batch.length) break;
      const grams = buildSearchDatagrams(batch, this.sequence);
      // Anything the first datagram could not hold goes back to the front of the queue.
      const first = grams[0];
      if (!first) break;
      const sent = new Set(first.cids);
      const rest = batch.filter((p) => !sent.has(p.cid));
      qi -= rest.length;
      for (let i = 0; i < rest.length; i++) q[qi + i] = rest[i]!;
      this.sequence = (first.sequence + 1) >>> 0 || 1;
      this.inFlight.set(first.sequence, now);
      for (const d of this.config.searchDestinations) this.socket!.send(first.bytes, d.port, d.host);
      this.datagramsSent++;
      for (const p of batch) {
        if (!sent.has(p.cid)) continue;
        p.queued = false;
        p.dueAt = now + searchRetryDelay(p.attempt, this.config.maxSearchPeriodMs);
        p.attempt++;
        if (p.dueAt < next) next = p.dueAt;
      }
    }
    this.nextDue = next;
    this.queue = q.slice(qi).filter((p) => p.queued);
    if (this.queue.length) this.schedule(SLOT_EXPIRY_MS);
    else if (next !== Infinity) this.schedule(Math.max(1, next - now));
  }

  private onMessage(msg: Buffer, from: string): void {
    const { messages } = parseDatagram(msg);
    let freed = false;
    for (const m of messages) {
      if (m.type === 'VersionResponse') {
        if (this.inFlight.delete(m.sequence)) freed = true;
      } else if (m.type === 'SearchResponse') {
        const p = this.pending.get(m.cid);
        if (!p) continue; // already found: the first answer won
        this.pending.delete(m.cid);
        p.queued = false;
        const host = m.address === 0xffffffff || m.address === 0 ? from : intToIpv4(m.address);
        this.onFound(m.cid, host, m.port, m.version);
      }
    }
    if (freed && this.queue.length && !this.pumping) this.sendDue();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.queue = [];
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
