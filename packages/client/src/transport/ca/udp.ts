// The CA name resolver, on the SearchScheduler both protocols share: many names per datagram and
// a window of datagrams in flight (a reply's VERSION sequence number frees its slot) so bursts do
// not overflow the server's receive buffer. Every datagram's SEARCH requests also go to the name
// servers (through `tcpSend`); with no UDP destination, no socket is made at all.
import { performance } from 'node:perf_hooks';
import { HEADER_SIZE, MAX_SEARCH_DATAGRAM } from '../../ca/constants.js';
import { emptyHeader } from '../../ca/header.js';
import { parseSearchReplies, writeSearchRequest, writeSearchVersion, type SearchReplyHandler } from '../../ca/search.js';
import { onlyLoopback } from '../config.js';
import type { CaConfig } from './config.js';
import { SearchScheduler, type SearchState } from '../search-scheduler.js';

/**
 * A name being searched for. The searcher keeps its state on the target itself (the Context's
 * channels implement this), so a search costs no object of its own.
 */
export interface SearchTarget extends SearchState {
  /** Bytes of the name on the wire (NUL-terminated, padded to 8). */
  readonly paddedLength: number;
}

/**
 * A server answered for `target`: `address` is the IPv4 address it gave as a uint32 (0 or
 * 0xffffffff: use `from`, the datagram's source), `port` its TCP port.
 */
export type FoundHandler = (target: SearchTarget, address: number, port: number, from: string, version: number) => void;

/** Hands a datagram's SEARCH requests (VERSION left out) and their count to the name servers. */
export type TcpSearchSender = (requests: Uint8Array, names: number) => void;

/** Shortest time a datagram holds its window slot when no reply names it (all its names missing). */
const SLOT_EXPIRY_MS = 20;
/** Shortest first retry delay of a name. */
const RETRY_BASE_MS = 32;
/**
 * Search datagram size when every destination is on the loopback interface (its MTU is 64 KB,
 * and CA servers accept datagrams up to 64 KB): fewer, larger datagrams, fewer system calls.
 */
const LOOPBACK_SEARCH_DATAGRAM = 8192;

interface InFlight {
  at: number;
  bytes: number;
}

export class UdpSearcher extends SearchScheduler<SearchTarget> {
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

  constructor(
    private readonly config: CaConfig,
    private readonly onFound: FoundHandler,
    private readonly tcpSend?: TcpSearchSender,
  ) {
    super(config.searchDestinations, tcpSend ? config.nameServers.length : 0);
    this.windowBytes = Math.max(1, config.searchWindow) * MAX_SEARCH_DATAGRAM;
    // Over TCP alone, the search messages may be large too (the stream paces them).
    const dests = config.searchDestinations;
    this.datagramBytes = onlyLoopback(dests) || dests.length === 0 ? LOOPBACK_SEARCH_DATAGRAM : MAX_SEARCH_DATAGRAM;
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

  /**
   * The round trip measured so far (which paces retries: a busy start can leave it at hundreds of
   * ms) and the datagrams in flight belong to the servers as they were: start from the defaults.
   */
  protected override startAfresh(): void {
    this.srttUs = SLOT_EXPIRY_MS * 1000;
    this.inFlight.clear();
    this.inFlightBytes = 0;
  }

  protected override counted(t: SearchTarget, sign: 1 | -1): void {
    this.queuedBytes += sign * (HEADER_SIZE + t.paddedLength);
  }

  /**
   * A full datagram's worth waiting and room in the window: send now, while the caller is still
   * adding names (the server works on these meanwhile).
   */
  protected override queuedNow(): void {
    if (this.queuedBytes >= this.datagramBytes - HEADER_SIZE && this.windowOpen) this.sendDue(true);
    else this.soon();
  }

  /** Send what is queued while the window allows (only full datagrams with `fullOnly`). */
  protected sendDue(fullOnly = false): void {
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
    this.compact();
    if (this.queue.length === 0) this.queuedBytes = 0;
    if (this.queue.length > this.qHead) this.schedule(expiry);
    else if (this.nextDue !== Infinity) this.schedule(Math.max(1, this.nextDue - now));
  }

  private expireSlots(now: number, expiry: number): void {
    for (const [seq, f] of this.inFlight) if (now - f.at > expiry) this.freeSlot(seq);
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
    const lostPeriod = Math.min(maxPeriod, this.lostPeriod());
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
      const due = this.sent(t, now, t.searchLost ? lostPeriod : maxPeriod, retryBase);
      if (due < next) next = due;
    }
    this.qHead = qi;
    this.nextDue = next;
    if (!names) return false;
    this.sequence = (seq + 1) >>> 0 || 1;
    this.transmit(bytes.subarray(0, len), names, seq, now);
    return true;
  }

  /**
   * A datagram to every UDP destination (holding a window slot until its reply), and its SEARCH
   * requests to the name servers; no socket is made when there is no UDP destination.
   */
  private transmit(gram: Uint8Array, names: number, seq: number, now: number): void {
    if (this.destinations.length) {
      this.inFlight.set(seq, { at: now, bytes: gram.length });
      this.inFlightBytes += gram.length;
      const socket = this.socket();
      for (let d = 0; d < this.destinations.length; d++) this.sendTo(socket, d, gram);
      this.datagramsSent++;
    }
    this.tcpSend?.(gram.subarray(HEADER_SIZE), names);
  }

  /**
   * A SEARCH reply from a name server (over TCP, from `host`): `address` as in a datagram (0 or
   * 0xffffffff: the name server's host itself). First answer wins, as for datagrams.
   */
  foundOverTcp(cid: number, address: number, port: number, host: string): void {
    if (this.closed) return;
    const t = this.answered(cid);
    if (t) this.onFound(t, address, port, host, 0);
  }

  protected onMessage(msg: Buffer, from: string): void {
    this.replyFrom = from;
    this.replyAnswered = false;
    // A malformed tail is ignored: what came before it still counts.
    parseSearchReplies(msg, new DataView(msg.buffer, msg.byteOffset, msg.length), this.replyHeader, this.replies);
    if (this.replyAnswered && this.queue.length > this.qHead && !this.closed) this.sendDue();
  }

  /** What a reply datagram tells (src/ca/search.ts parses it), with its source in replyFrom. */
  private readonly replies: SearchReplyHandler = {
    searchReply: (cid, address, port, version) => {
      const t = this.answered(cid);
      if (t) this.onFound(t, address, port, this.replyFrom, version);
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

  override close(): void {
    super.close();
    this.queuedBytes = 0;
    this.inFlight.clear();
    this.inFlightBytes = 0;
  }
}
