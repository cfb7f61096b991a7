// The channel creates of one PV Access connection waiting to be sent: batched to the end of the
// turn's writes, held back while CREATES_IN_FLIGHT creates are unanswered, and sent in the order
// the channels were made (their cids), not the order their servers answered the searches: a
// snapshot's names are then created, initialised and read in the order asked, a name whose
// search was answered late going ahead of later names still waiting.
import type { ChannelName } from './messages.js';

/**
 * Creates sent and not yet answered, at most. A pvxs server (QSRV) handles all it has read
 * before it writes a reply, so 10,000 creates sent at once hold back every reply, and every
 * INIT after them, until the last create is done (about half a second on a shared 2-core
 * machine): with a window the server answers the first names while the client sends the next,
 * and a server too slow for the caller's timeout still answers most names in time.
 */
const CREATES_IN_FLIGHT = 500;

export class CreateQueue {
  /** A binary min-heap by cid. */
  private heap: ChannelName[] = [];
  private inFlight = 0;

  /** Creates wait to be sent. */
  get waiting(): boolean {
    return this.heap.length > 0;
  }

  push(c: ChannelName): void {
    const h = this.heap;
    let i = h.length;
    h.push(c);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (h[up]!.id <= c.id) break;
      h[i] = h[up]!;
      i = up;
    }
    h[i] = c;
  }

  private pop(): ChannelName {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    const n = h.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && h[c + 1]!.id < h[c]!.id) c++;
      if (h[c]!.id >= last.id) break;
      h[i] = h[c]!;
      i = c;
    }
    h[i] = last;
    return top;
  }

  /** The requests that may go out now (each a CREATE_CHANNEL's channels: one, as every server takes). */
  take(): ChannelName[][] {
    const out: ChannelName[][] = [];
    while (this.heap.length > 0 && this.inFlight < CREATES_IN_FLIGHT) {
      out.push([this.pop()]);
      this.inFlight++;
    }
    return out;
  }

  /** A create was answered: true when more wait to be sent. */
  answered(): boolean {
    if (this.inFlight > 0) this.inFlight--;
    return this.waiting;
  }

  /** Forget the queue and the creates sent: the connection is gone. */
  clear(): void {
    this.heap = [];
    this.inFlight = 0;
  }
}
