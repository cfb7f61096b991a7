// What both protocols' name resolvers share: the UDP sockets (one udp4 socket for CA; for PV
// Access also a udp6 one and one per multicast interface and TTL), the names being searched for
// (their state kept on each target), the queue of names due, per-name retries on the doubling
// backoff, the one timer and the one end-of-turn send, first answer wins. The datagrams' bytes
// and what a reply means are the protocol's (ca/udp.ts for CA, pva/udp.ts for PV Access).
import type dgram from 'node:dgram';
// Loaded with this module rather than lazily by their first use, which is on the path of the
// first search: dgram's bind() requires the cluster module (to detect cluster workers), and the
// `performance` global loads perf_hooks when first touched.
import 'node:cluster';
import { performance } from 'node:perf_hooks';
import { searchRetryDelay } from '../wire/retry.js';
import { getLogger } from '../log.js';
import type { SearchDestination } from './config.js';
import { destinationName, SearchSockets } from './search-sockets.js';

const log = getLogger('search');

/** A name being searched for: the searcher keeps its state on the target (a channel), no object of its own. */
export interface SearchState {
  readonly cid: number;
  readonly name: string;
  /** Attempts so far, when the next one is due (whole ms of performance.now()), whether it waits in the queue. */
  searchAttempt: number;
  searchDueAt: number;
  searchQueued: boolean;
  /** Searched again after losing a server whose beacons do not reach this client: retried sooner (lostPeriod()). */
  searchLost?: boolean;
}

/** Shortest time between two rounds of searchAgain(). */
const AGAIN_MIN_MS = 100;
/**
 * A name whose server went away is searched at least every LOST_RETRY_MS, so that it is found
 * within about that of the server's return even when no beacon (nor name server) tells; with many
 * names the period stretches so that at most LOST_NAMES_PER_S of them are searched a second
 * (10,000 names every 10 s), and never past LOST_MAX_MS (100,000 every 30 s, as pvxs bounds them).
 */
const LOST_RETRY_MS = 1000;
const LOST_NAMES_PER_S = 1000;
const LOST_MAX_MS = 30_000;

/** What the searches to one destination came to (Context.stats()). */
export interface DestinationStats {
  /** "host:port", "[ip6]:port", with ",TTL@iface" for a multicast group. */
  readonly destination: string;
  readonly broadcast: boolean;
  /** Datagrams the system took, and datagrams it refused (with the last refusal's code). */
  sent: number;
  failed: number;
  lastError?: string;
}

/** Codes of a send the system refused by policy rather than for want of a route. */
const REFUSALS = new Set(['EACCES', 'EPERM']);

/**
 * One destination: its counts and the one callback all its sends share (a send without a
 * callback loses its error: Node reports a refused sendto() only there).
 */
class Destination {
  readonly stats: DestinationStats;
  private readonly logged = new Set<string>();
  readonly done: (err: Error | null) => void;

  constructor(
    readonly host: string,
    readonly port: number,
    broadcast: boolean,
    readonly lane: number,
    readonly multicast: boolean,
    name: string,
  ) {
    this.stats = { destination: name, broadcast, sent: 0, failed: 0 };
    this.done = (err) => {
      if (!err) {
        this.stats.sent++;
        return;
      }
      const code = (err as NodeJS.ErrnoException).code ?? err.message;
      this.stats.failed++;
      this.stats.lastError = code;
      if (this.logged.has(code)) return;
      this.logged.add(code);
      log.warn(
        { destination: this.stats.destination, code },
        `search to ${this.stats.destination} ${REFUSALS.has(code) ? 'refused' : 'failed'}: ${code}`,
      );
    };
  }
}

export abstract class SearchScheduler<T extends SearchState> {
  /** The sockets (search-sockets.ts): one udp4 socket for CA. */
  private readonly sockets: SearchSockets;
  /** True once every socket is bound or failed to (sends made before are queued by Node). */
  protected bound = false;
  protected readonly pending = new Map<number, T>();
  protected queue: T[] = [];
  protected qHead = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private soonPending = false;
  /** While above zero, more names are on their way (see cork()). */
  protected corks = 0;
  /** When the earliest retry not yet queued falls due. */
  protected nextDue = Infinity;
  protected closed = false;
  private againAt = -Infinity;
  private againTimer: NodeJS.Timeout | undefined;
  /** Datagrams sent (for diagnostics and tests). */
  datagramsSent = 0;
  /** Where every search datagram goes, with what became of the sends. */
  protected readonly destinations: readonly Destination[];

  /** `nameServers`: how many name servers the searches also go to (over TCP, not through here). */
  constructor(destinations: readonly SearchDestination[], nameServers = 0) {
    this.sockets = new SearchSockets(
      destinations,
      (msg, from) => this.onMessage(msg, from),
      () => {
        this.bound = true;
        this.onBound();
      },
    );
    this.destinations = destinations.map(
      (d, i) => new Destination(d.host, d.port, d.broadcast, this.sockets.laneOf[i]!, d.multicast === true, destinationName(d)),
    );
    if (destinations.length === 0 && nameServers === 0)
      log.warn('no search destinations: every name will time out (set an address list, or leave the automatic one on)');
    else if (destinations.length === 0) log.info(`searching over ${nameServers} name server${nameServers > 1 ? 's' : ''} only`);
    else if (log.isLevelEnabled('info'))
      log.info(`searching ${this.destinations.map((d) => `${d.stats.destination}${d.stats.broadcast ? ' (broadcast)' : ''}`).join(', ')}`);
  }

  /** Send what is queued and due. */
  protected abstract sendDue(): void;
  /** A datagram arrived on the socket. */
  protected abstract onMessage(msg: Buffer, from: string): void;
  /** `t` joined (+1) or left (-1) the queue (CA counts the bytes queued). */
  protected counted(_t: T, _sign: 1 | -1): void {}
  /** searchAgain() is about to send every name: forget what was learnt of the servers before. */
  protected startAfresh(): void {}
  /** A name joined the queue from add(): send at the end of the turn. */
  protected queuedNow(): void {
    this.soon();
  }

  get searching(): number {
    return this.pending.size;
  }

  /** The udp4 socket (every socket made and bound on first use). */
  protected socket(): dgram.Socket {
    return this.sockets.udp4();
  }

  /** The socket destination `i` is sent through, or undefined when it could not be bound. */
  protected socketOf(i: number): dgram.Socket | undefined {
    return this.sockets.socket(this.destinations[i]!.lane);
  }

  /** Why destination `i`'s socket could not be bound (undefined: it is fine). */
  protected laneError(i: number): Error | undefined {
    return this.sockets.error(this.destinations[i]!.lane);
  }

  /** The local port of socket `lane` (a destination's `lane`; 0 is the udp4 one); 0 when not bound. */
  protected lanePort(lane: number): number {
    return this.sockets.port(lane);
  }

  /** The socket is bound. */
  protected onBound(): void {}

  /**
   * Send `gram` to destination `i` (Node queues it until the socket is bound). A refusal, by the
   * system (through the callback) or by Node before it tries (a throw), counts for `i` alone.
   */
  protected sendTo(socket: dgram.Socket, i: number, gram: Uint8Array): void {
    const d = this.destinations[i]!;
    try {
      socket.send(gram, d.port, d.host, d.done);
    } catch (err) {
      d.done(err as Error);
    }
  }

  /** Per destination: datagrams the system took and refused. */
  destinationStats(): DestinationStats[] {
    return this.destinations.map((d) => ({ ...d.stats }));
  }

  /** Start (or restart, after a disconnect) searching for a name, now or after `delayMs`. */
  add(t: T, delayMs = 0): void {
    if (this.closed) return;
    if (this.pending.get(t.cid) !== t) {
      this.pending.set(t.cid, t);
      t.searchQueued = false;
    }
    t.searchAttempt = 0;
    t.searchDueAt = delayMs > 0 ? Math.ceil(performance.now() + delayMs) : 0;
    if (delayMs > 0) {
      // Later (e.g. after a connection to that server failed): the due scan picks it up.
      if (t.searchDueAt < this.nextDue) this.nextDue = t.searchDueAt;
      this.schedule(delayMs);
      return;
    }
    if (t.searchQueued) return this.soon(); // already waiting in the queue
    t.searchQueued = true;
    this.queue.push(t);
    this.counted(t, 1);
    this.queuedNow();
  }

  /**
   * A server appeared or came back (a beacon said so, or a name server connected): every name
   * still searched for goes out again now, its backoff restarted. Calls closer together than
   * AGAIN_MIN_MS (servers booting together) make one more round at the end of that interval.
   */
  searchAgain(): void {
    if (this.closed) return;
    const wait = this.againAt + AGAIN_MIN_MS - performance.now();
    if (wait > 0) {
      this.againTimer ??= setTimeout(() => {
        this.againTimer = undefined;
        this.searchAgain();
      }, wait);
      return;
    }
    this.againAt = performance.now();
    this.startAfresh();
    for (const t of this.pending.values()) {
      t.searchAttempt = 0;
      t.searchDueAt = 0;
      if (t.searchQueued) continue;
      t.searchQueued = true;
      this.queue.push(t);
      this.counted(t, 1);
    }
    this.soon();
  }

  /** Stop searching for a name (found elsewhere, or no longer wanted). */
  remove(t: T): void {
    if (this.pending.get(t.cid) !== t) return;
    this.pending.delete(t.cid);
    if (t.searchQueued) this.counted(t, -1);
    t.searchQueued = false; // stays in the queue array but is skipped
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
  protected soon(): void {
    if (this.soonPending || this.closed || this.corks > 0) return;
    this.soonPending = true;
    setImmediate(() => {
      this.soonPending = false;
      this.sendDue();
    });
  }

  /** Call sendDue() in `delayMs` (or earlier if already due earlier). */
  protected schedule(delayMs: number): void {
    if (this.closed) return;
    const at = performance.now() + delayMs;
    if (this.timer && at >= this.timerAt - 1) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.timerAt = Infinity;
        // Let the replies already received be read first (timers run before I/O in a loop turn):
        // a busy client would otherwise retry names whose answers are waiting in its socket.
        setImmediate(() => this.sendDue());
      },
      Math.max(1, delayMs),
    );
  }

  /** Queue the names whose retry is due; returns when the next one falls due. */
  protected queueDue(now: number): number {
    let next = Infinity;
    for (const t of this.pending.values()) {
      if (t.searchQueued) continue;
      if (t.searchDueAt <= now) {
        t.searchQueued = true;
        this.queue.push(t);
        this.counted(t, 1);
      } else if (t.searchDueAt < next) next = t.searchDueAt;
    }
    return next;
  }

  /** The longest retry period of a name whose server went away (see LOST_RETRY_MS). */
  protected lostPeriod(): number {
    return Math.min(LOST_MAX_MS, Math.max(LOST_RETRY_MS, (1000 * this.pending.size) / LOST_NAMES_PER_S));
  }

  /** `t` went out in a datagram at `now`: its next attempt is due after the backoff; returns when. */
  protected sent(t: T, now: number, maxPeriodMs: number, retryBaseMs: number): number {
    t.searchQueued = false;
    t.searchDueAt = Math.ceil(now + searchRetryDelay(t.searchAttempt, maxPeriodMs, retryBaseMs));
    t.searchAttempt++;
    return t.searchDueAt;
  }

  /** Drop the names already sent from the queue's front. */
  protected compact(): void {
    const q = this.queue;
    const qi = this.qHead;
    if (qi >= q.length) {
      this.queue = [];
      this.qHead = 0;
    } else if (qi > 1024 && qi * 2 > q.length) {
      this.queue = q.slice(qi);
      this.qHead = 0;
    }
  }

  /** A server answered for `cid`: the target, no longer searched for (undefined: answered already, or unknown). */
  protected answered(cid: number): T | undefined {
    const t = this.pending.get(cid);
    if (!t) return undefined; // first answer wins: later ones find nothing pending
    this.pending.delete(cid);
    t.searchQueued = false;
    return t;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.againTimer) clearTimeout(this.againTimer);
    this.timer = undefined;
    this.pending.clear();
    this.queue = [];
    this.qHead = 0;
    this.sockets.close();
  }
}
