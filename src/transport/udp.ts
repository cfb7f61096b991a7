// The UDP name resolver: one socket per Context; many names per datagram; a window of datagrams
// in flight (a reply's VERSION sequence number frees its slot) so bursts do not overflow the
// server's receive buffer; per-name retries with a doubling backoff; first answer wins.
import dgram from 'node:dgram';
// Loaded with this module rather than lazily by their first use, which is on the path of the
// first search: dgram's bind() requires the cluster module (to detect cluster workers), and the
// `performance` global loads perf_hooks when first touched.
import 'node:cluster';
import { performance } from 'node:perf_hooks';
import { HEADER_SIZE, MAX_SEARCH_DATAGRAM } from '../ca/constants.js';
import { emptyHeader } from '../ca/header.js';
import { parseSearchReplies, searchRetryDelay, writeSearchRequest, writeSearchVersion, type SearchReplyHandler } from '../ca/search.js';
import type { CaConfig } from './config.js';

/**
 * A name being searched for. The searcher keeps its state on the target itself (the Context's
 * channels implement this), so a search costs no object of its own.
 */
export interface SearchTarget {
  readonly cid: number;
  readonly name: string;
  /** Bytes of the name on the wire (NUL-terminated, padded to 8). */
  readonly paddedLength: number;
  /**
   * Searcher state: attempts so far, when the next one is due (whole ms of performance.now()),
   * whether it waits in the queue.
   */
  searchAttempt: number;
  searchDueAt: number;
  searchQueued: boolean;
}

/**
 * A server answered for `target`: `address` is the IPv4 address it gave as a uint32 (0 or
 * 0xffffffff: use `from`, the datagram's source), `port` its TCP port.
 */
export type FoundHandler = (target: SearchTarget, address: number, port: number, from: string, version: number) => void;

/** Shortest time a datagram holds its window slot when no reply names it (all its names missing). */
const SLOT_EXPIRY_MS = 20;
/** Shortest first retry delay of a name. */
const RETRY_BASE_MS = 32;
/** Receive buffer asked for the search socket: replies to a whole window must fit. */
const RECV_BUFFER_BYTES = 1 << 20;
/**
 * Search datagram size when every destination is on the loopback interface (its MTU is 64 KB,
 * and CA servers accept datagrams up to 64 KB): fewer, larger datagrams, fewer system calls.
 */
const LOOPBACK_SEARCH_DATAGRAM = 8192;

function isLoopback(host: string): boolean {
  return host.startsWith('127.') || host === 'localhost';
}

interface InFlight {
  at: number;
  bytes: number;
}

export class UdpSearcher {
  private socket: dgram.Socket | undefined;
  private readonly pending = new Map<number, SearchTarget>();
  private queue: SearchTarget[] = [];
  private qHead = 0;
  private readonly inFlight = new Map<number, InFlight>();
  private inFlightBytes = 0;
  /** Bytes of requests added since the last send (a full datagram's worth is sent at once). */
  private queuedBytes = 0;
  /** Bytes of search datagrams allowed in flight (searchWindow datagrams of the Ethernet size). */
  private readonly windowBytes: number;
  private readonly datagramBytes: number;
  /**
   * Smoothed time from a datagram's send to the processing of its reply (our own lag included),
   * in whole microseconds (an integer field keeps one representation in the engine).
   */
  private srttUs = SLOT_EXPIRY_MS * 1000;
  private sequence = 1;
  /** Scratch state of the reply being parsed. */
  private readonly replyHeader = emptyHeader();
  private replyFrom = '';
  private replyAnswered = false;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private soonPending = false;
  /** While above zero, more names are on their way: only full datagrams are sent. */
  private corks = 0;
  private nextDue = Infinity;
  private closed = false;
  /** Datagrams sent (for diagnostics and tests). */
  datagramsSent = 0;

  constructor(private readonly config: CaConfig, private readonly onFound: FoundHandler) {
    this.windowBytes = Math.max(1, config.searchWindow) * MAX_SEARCH_DATAGRAM;
    const dests = config.searchDestinations;
    this.datagramBytes = dests.length > 0 && dests.every((d) => isLoopback(d.host)) ? LOOPBACK_SEARCH_DATAGRAM : MAX_SEARCH_DATAGRAM;
  }

  private get windowOpen(): boolean {
    return this.inFlightBytes < this.windowBytes;
  }

  private freeSlot(seq: number): void {
    const f = this.inFlight.get(seq);
    if (!f) return;
    this.inFlight.delete(seq);
    this.inFlightBytes -= f.bytes;
  }

  private open(): dgram.Socket {
    if (this.socket) return this.socket;
    const s = dgram.createSocket({ type: 'udp4' });
    this.socket = s;
    s.on('message', (msg, rinfo) => this.onMessage(msg, rinfo.address));
    s.on('error', () => {
      // Send errors (e.g. ICMP port unreachable) are expected when no server listens.
    });
    s.once('listening', () => {
      try {
        if (s.getRecvBufferSize() < RECV_BUFFER_BYTES) s.setRecvBufferSize(RECV_BUFFER_BYTES);
      } catch {
        // the system caps it: keep its default
      }
    });
    // Sends made before the bind completes are queued by Node and go out once bound.
    s.bind(0);
    return s;
  }

  /** Start (or restart, after a disconnect) searching for a name. */
  add(t: SearchTarget, delayMs = 0): void {
    if (this.closed) return;
    if (this.pending.get(t.cid) !== t) {
      this.pending.set(t.cid, t);
      t.searchQueued = false;
    }
    t.searchAttempt = 0;
    t.searchDueAt = delayMs > 0 ? Math.ceil(performance.now() + delayMs) : 0;
    if (delayMs > 0) {
      // Later (e.g. after a circuit to that server failed): the due scan picks it up.
      if (t.searchDueAt < this.nextDue) this.nextDue = t.searchDueAt;
      this.schedule(delayMs);
      return;
    }
    if (t.searchQueued) return this.soon(); // already waiting in the queue
    t.searchQueued = true;
    this.queue.push(t);
    this.queuedBytes += HEADER_SIZE + t.paddedLength;
    // A full datagram's worth waiting and room in the window: send now, while the caller is
    // still adding names (the server works on these meanwhile).
    if (this.queuedBytes >= this.datagramBytes - HEADER_SIZE && this.windowOpen) this.sendDue(true);
    else this.soon();
  }

  /**
   * The caller is about to add many names over several event-loop turns: until uncork(), send
   * only full datagrams (a partial one would go out at the end of every turn).
   */
  cork(): void {
    this.corks++;
  }

  uncork(): void {
    if (this.corks > 0 && --this.corks === 0) this.soon();
  }

  /** Send what is queued once the caller's synchronous work is done (one check per turn). */
  private soon(): void {
    if (this.soonPending || this.closed || this.corks > 0) return;
    this.soonPending = true;
    setImmediate(() => {
      this.soonPending = false;
      this.sendDue();
    });
  }

  /** Stop searching for a name (found elsewhere, or no longer wanted). */
  remove(t: SearchTarget): void {
    if (this.pending.get(t.cid) !== t) return;
    this.pending.delete(t.cid);
    if (t.searchQueued) this.queuedBytes -= HEADER_SIZE + t.paddedLength;
    t.searchQueued = false; // stays in the queue array but is skipped
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
      // Let the replies already received be read first (timers run before I/O in a loop turn):
      // a busy client would otherwise retry names whose answers are waiting in its socket.
      setImmediate(() => this.sendDue());
    }, delayMs);
  }

  /** Send what is queued while the window allows (only full datagrams with `fullOnly`). */
  private sendDue(fullOnly = false): void {
    if (this.closed) return;
    const now = performance.now();
    const expiry = Math.min(250, Math.max(SLOT_EXPIRY_MS, this.srttUs / 500));
    if (this.inFlight.size) this.expireSlots(now, expiry);
    // Names whose retry is due join the queue (scan only when something can be due).
    this.nextDue = now >= this.nextDue ? this.queueDue(now) : this.nextDue;
    const max = this.datagramBytes;
    const full = fullOnly || this.corks > 0;
    while (this.qHead < this.queue.length && this.windowOpen && (!full || this.queuedBytes >= max - HEADER_SIZE)) {
      if (!this.sendDatagram(now)) break;
    }
    const q = this.queue;
    const qi = this.qHead;
    if (qi >= q.length) {
      this.queue = [];
      this.qHead = 0;
      this.queuedBytes = 0;
    } else if (qi > 1024 && qi * 2 > q.length) {
      this.queue = q.slice(qi);
      this.qHead = 0;
    }
    if (this.queue.length > this.qHead) this.schedule(expiry);
    else if (this.nextDue !== Infinity) this.schedule(Math.max(1, this.nextDue - now));
  }

  private expireSlots(now: number, expiry: number): void {
    for (const [seq, f] of this.inFlight) if (now - f.at > expiry) this.freeSlot(seq);
  }

  /** Queue the names whose retry is due; returns when the next one falls due. */
  private queueDue(now: number): number {
    let next = Infinity;
    for (const t of this.pending.values()) {
      if (t.searchQueued) continue;
      if (t.searchDueAt <= now) {
        t.searchQueued = true;
        this.queue.push(t);
        this.queuedBytes += HEADER_SIZE + t.paddedLength;
      } else if (t.searchDueAt < next) next = t.searchDueAt;
    }
    return next;
  }

  /**
   * One datagram: as many queued names as fit, written straight into its bytes, sent to every
   * destination. Returns false when the queue held no name to send.
   */
  private sendDatagram(now: number): boolean {
    const max = this.datagramBytes;
    const bytes = new Uint8Array(max);
    const view = new DataView(bytes.buffer);
    const seq = this.sequence;
    const retryBase = Math.min(500, Math.max(RETRY_BASE_MS, this.srttUs / 500));
    const maxPeriod = this.config.maxSearchPeriodMs;
    const q = this.queue;
    let qi = this.qHead;
    let next = this.nextDue;
    let len = writeSearchVersion(view, 0, seq);
    let names = 0;
    while (qi < q.length) {
      const t = q[qi]!;
      if (!t.searchQueued || this.pending.get(t.cid) !== t) {
        qi++;
        continue;
      }
      const size = HEADER_SIZE + t.paddedLength;
      if (len + size > max) {
        if (names) break;
        // Cannot fit any datagram (the Context rejects such names earlier): drop it.
        qi++;
        this.remove(t);
        continue;
      }
      len += writeSearchRequest(view, bytes, len, t.name, t.cid);
      this.queuedBytes -= size;
      names++;
      qi++;
      t.searchQueued = false;
      t.searchDueAt = Math.ceil(now + searchRetryDelay(t.searchAttempt, maxPeriod, retryBase));
      t.searchAttempt++;
      if (t.searchDueAt < next) next = t.searchDueAt;
    }
    this.qHead = qi;
    this.nextDue = next;
    if (!names) return false;
    this.sequence = (seq + 1) >>> 0 || 1;
    this.inFlight.set(seq, { at: now, bytes: len });
    this.inFlightBytes += len;
    this.transmit(bytes.subarray(0, len));
    return true;
  }

  private transmit(gram: Uint8Array): void {
    const socket = this.open();
    const dests = this.config.searchDestinations;
    for (let d = 0; d < dests.length; d++) socket.send(gram, dests[d]!.port, dests[d]!.host);
    this.datagramsSent++;
  }

  private onMessage(msg: Buffer, from: string): void {
    this.replyFrom = from;
    this.replyAnswered = false;
    // A malformed tail is ignored: what came before it still counts.
    parseSearchReplies(msg, new DataView(msg.buffer, msg.byteOffset, msg.length), this.replyHeader, this.replies);
    if (this.replyAnswered && this.queue.length > this.qHead && !this.closed) this.sendDue();
  }

  /** What a reply datagram tells (src/ca/search.ts parses it), with its source in replyFrom. */
  private readonly replies: SearchReplyHandler = {
    searchReply: (cid, address, port, version) => {
      const t = this.pending.get(cid);
      if (!t) return; // first answer wins: later ones find nothing pending
      this.pending.delete(cid);
      t.searchQueued = false;
      this.onFound(t, address, port, this.replyFrom, version);
    },
    searchVersion: (sequence) => {
      // The server answered that datagram: its slot is free (it may have expired already).
      const f = this.inFlight.get(sequence);
      if (f) {
        this.srttUs += Math.round(((performance.now() - f.at) * 1000 - this.srttUs) / 8);
        this.freeSlot(sequence);
      }
      this.replyAnswered = true;
    },
  };

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending.clear();
    this.queue = [];
    this.qHead = 0;
    this.queuedBytes = 0;
    this.inFlight.clear();
    this.inFlightBytes = 0;
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
