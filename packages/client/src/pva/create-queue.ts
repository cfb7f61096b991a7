// The channel creates of one PV Access connection waiting to be sent: batched to the end of the
// turn's writes, and held back while CREATES_IN_FLIGHT creates are unanswered.
import type { ChannelName } from './messages.js';

/** Channels named in one CREATE_CHANNEL request (pvxs takes many; other servers only one). */
const MAX_CREATES = 1;
/**
 * Creates sent and not yet answered, at most. A pvxs server (QSRV) handles all it has read
 * before it writes a reply, so 10,000 creates sent at once hold back every reply, and every
 * INIT after them, until the last create is done (about half a second on a shared 2-core
 * machine): with a window the server answers the first names while the client sends the next,
 * and a server too slow for the caller's timeout still answers most names in time.
 */
const CREATES_IN_FLIGHT = 500;

export class CreateQueue {
  private list: ChannelName[] = [];
  private head = 0;
  private inFlight = 0;

  /** Creates wait to be sent. */
  get waiting(): boolean {
    return this.list.length > this.head;
  }

  push(c: ChannelName): void {
    this.list.push(c);
  }

  /** The requests that may go out now (each a CREATE_CHANNEL's channels). */
  take(): ChannelName[][] {
    const list = this.list;
    const end = Math.min(list.length, this.head + Math.max(0, CREATES_IN_FLIGHT - this.inFlight));
    const out: ChannelName[][] = [];
    for (let i = this.head; i < end; i += MAX_CREATES) out.push(list.slice(i, Math.min(end, i + MAX_CREATES)));
    this.inFlight += end - this.head;
    this.head = end;
    if (end === list.length) this.clear(false);
    return out;
  }

  /** A create was answered: true when more wait to be sent. */
  answered(): boolean {
    if (this.inFlight > 0) this.inFlight--;
    return this.waiting;
  }

  /** Forget the queue (and, with `inFlight`, the creates sent: the connection is gone). */
  clear(inFlight = true): void {
    this.list = [];
    this.head = 0;
    if (inFlight) this.inFlight = 0;
  }
}
