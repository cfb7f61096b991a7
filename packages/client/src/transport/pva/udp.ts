// PV Access name resolution, on the SearchScheduler both protocols share: many names per SEARCH
// message, sent to every destination through its family's (or multicast group's) socket, with
// that socket's port for the reply (and to the TCP name servers through `tcpSend`), a burst of
// datagrams per event-loop turn.
import { performance } from 'node:perf_hooks';
import { Writer } from '../../pva/buffer.js';
import { Cmd, HEADER_SIZE } from '../../pva/constants.js';
import { emptyHeader, finishMessage, readHeader, startMessage } from '../../pva/header.js';
import { decodeMessage } from '../../pva/messages.js';
import { addressOf, SearchFlags } from '../../pva/messages-session.js';
import { onlyLoopback } from '../config.js';
import type { PvaConfig } from './config.js';
import { SearchScheduler, type SearchState } from '../search-scheduler.js';

/** A name being searched for; the searcher keeps its state on the target. */
export type PvaSearchTarget = SearchState;

/** A server answered for `target` at host:port, over TLS when `tls` (its reply said "tls"). */
export type PvaFoundHandler = (target: PvaSearchTarget, host: string, port: number, tls: boolean) => void;

/** Datagram size on loopback (pvxs servers read up to 64 KB) and elsewhere (the Ethernet MTU). */
const LOOPBACK_DATAGRAM = 8192;
const ETHERNET_DATAGRAM = 1400;
/** Datagrams sent per event-loop turn (the server's receive buffer must take a burst). */
const BURST = 6;
/** First retry delay of a name (then doubling up to the bound below). */
const RETRY_BASE_MS = 100;
/**
 * The bound of a name's retry period, as pvxs's 30-bucket search ring: a name is searched at
 * least every 30 s (or EPICS_CA_MAX_SEARCH_PERIOD, if shorter).
 */
const MAX_RETRY_MS = 30_000;

export class PvaSearcher extends SearchScheduler<PvaSearchTarget> {
  private readonly datagramBytes: number;
  private readonly header = emptyHeader();
  private sequence = 1;

  constructor(
    private readonly config: PvaConfig,
    private readonly onFound: PvaFoundHandler,
    /** Also send each search message over TCP (to the name servers that are connected). */
    private readonly tcpSend: (message: Uint8Array) => void,
  ) {
    super(config.searchDestinations, config.nameServers.length);
    this.datagramBytes = onlyLoopback(config.searchDestinations) ? LOOPBACK_DATAGRAM : ETHERNET_DATAGRAM;
  }

  protected override onBound(): void {
    this.soon();
  }

  protected sendDue(): void {
    if (this.closed) return;
    this.socket();
    if (!this.bound) return; // the 'listening' handler calls again
    const now = performance.now();
    if (now >= this.nextDue) this.nextDue = this.queueDue(now);
    let sent = 0;
    while (this.qHead < this.queue.length && sent < BURST) {
      if (!this.sendDatagram(now)) break;
      sent++;
    }
    this.compact();
    if (this.queue.length > this.qHead) this.soon();
    else if (this.nextDue !== Infinity) this.schedule(Math.max(1, this.nextDue - now));
  }

  /** One SEARCH message with as many queued names as fit; false when none was queued. */
  private sendDatagram(now: number): boolean {
    const w = new Writer(true, this.datagramBytes + 256);
    const seq = this.sequence;
    const off = startMessage(w, Cmd.SEARCH, 0);
    w.i32(seq);
    const flagsAt = w.length;
    w.u8(0);
    w.u8(0);
    w.u16(0);
    w.raw(new Uint8Array(16)); // reply address: any (the server replies to the datagram's source)
    const portAt = w.length;
    w.u16(0); // the port of the socket each copy goes out of
    // The protocols this client speaks: "tls" first when it has a keychain (Secure PV Access).
    w.size(this.config.tls ? 2 : 1);
    if (this.config.tls) w.string('tls');
    w.string('tcp');
    const countAt = w.length;
    w.u16(0);
    let names = 0;
    const q = this.queue;
    let qi = this.qHead;
    let next = this.nextDue;
    const maxPeriod = Math.min(MAX_RETRY_MS, this.config.maxSearchPeriodMs);
    const lostPeriod = Math.min(maxPeriod, this.lostPeriod());
    while (qi < q.length && names < 0xffff) {
      const t = q[qi]!;
      if (!t.searchQueued || this.pending.get(t.cid) !== t) {
        qi++;
        continue;
      }
      const before = w.length;
      w.i32(t.cid);
      w.string(t.name);
      if (w.length > this.datagramBytes && names > 0) {
        w.length = before;
        break;
      }
      names++;
      qi++;
      const due = this.sent(t, now, t.searchLost ? lostPeriod : maxPeriod, RETRY_BASE_MS);
      if (due < next) next = due;
    }
    this.qHead = qi;
    this.nextDue = next;
    if (!names) return false;
    w.dataView.setUint16(countAt, names, true);
    finishMessage(w, off);
    this.sequence = (seq + 1) >>> 0 || 1;
    const base = w.take();
    // Sends are queued by Node: each variant (socket's port, unicast flag) keeps its own bytes.
    const variants: Array<Uint8Array | undefined> = [];
    let made = 0;
    const variant = (lane: number, unicast: boolean): Uint8Array => {
      const key = 2 * lane + (unicast ? 1 : 0);
      let gram = variants[key];
      if (!gram) {
        gram = made++ === 0 ? base : base.slice();
        gram[flagsAt] = unicast ? SearchFlags.UNICAST : 0;
        new DataView(gram.buffer, gram.byteOffset, gram.byteLength).setUint16(portAt, this.lanePort(lane), true);
        variants[key] = gram;
      }
      return gram;
    };
    for (let i = 0; i < this.destinations.length; i++) {
      const d = this.destinations[i]!;
      const sock = this.socketOf(i);
      if (!sock) d.done(this.laneError(i) ?? new Error('no socket'));
      else this.sendTo(sock, i, variant(d.lane, !d.stats.broadcast && !d.multicast));
    }
    // Over TCP: unicast, with the udp4 socket's port (as a udp4 destination's copy has).
    this.tcpSend(variant(0, true));
    this.datagramsSent++;
    return true;
  }

  protected onMessage(msg: Buffer, from: string): void {
    let pos = 0;
    const h = this.header;
    // A datagram may hold several messages; a malformed one ends the datagram.
    while (msg.length - pos >= HEADER_SIZE && readHeader(msg, pos, h)) {
      const end = pos + HEADER_SIZE + h.payloadSize;
      if (end > msg.length) return;
      if (h.command === Cmd.SEARCH_RESPONSE) {
        const m = decodeMessage(h, msg.subarray(pos + HEADER_SIZE, end));
        if (m.type === 'SearchResponse') this.found(m.found, m.ids, m.address, m.port, from, m.protocol);
      }
      pos = end;
    }
  }

  /**
   * A search reply (UDP, or TCP from a name server whose host is `from`): the server's address,
   * or for :: and 0.0.0.0 the reply's source (an IPv6 link-local one keeps its %zone), and the
   * protocol to reach it with ("tcp", or "tls" when this client offered it).
   */
  found(found: boolean, ids: number[], address: Uint8Array, port: number, from: string, protocol: string): void {
    if (!found || this.closed || (protocol !== 'tcp' && protocol !== 'tls')) return;
    const host = addressOf(address) ?? from;
    for (const id of ids) {
      const t = this.answered(id);
      if (t) this.onFound(t, host, port, protocol === 'tls');
    }
  }
}
