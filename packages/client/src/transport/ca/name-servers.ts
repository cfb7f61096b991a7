// Channel Access name servers (EPICS_CA_NAME_SERVERS), as libca has them: one circuit to each
// listed server, opened like any other (VERSION, HOST_NAME, CLIENT_NAME) and opened again a second
// after it drops; it carries the searcher's SEARCH requests once its server told a protocol
// version that takes them (4.12 or later), hands the replies back, and counts both.
import { TCP_SEARCH_MIN_VERSION } from '../../ca/search.js';
import { getLogger } from '../../log.js';
import type { Endpoint } from '../config.js';
import type { NameServerStats } from '../search-scheduler.js';
import type { CaConfig } from './config.js';
import { TcpCircuit } from './tcp.js';

const log = getLogger('ca.nameservers');

/** Pause before connecting again to a name server that went away or refused. */
export const NAME_SERVER_RETRY_MS = 1000;

export interface NameServerEvents {
  /**
   * A name server answered for `cid`: the server is at `address` (an IPv4 uint32; 0 or
   * 0xffffffff: `host`, the name server's own address) and `port`.
   */
  reply(cid: number, address: number, port: number, host: string): void;
  /** A name server (re)connected and takes searches: search every pending name again. */
  ready(): void;
}

interface Server {
  readonly ep: Endpoint;
  readonly stats: NameServerStats;
  circuit: TcpCircuit | undefined;
  /** Its server told a version that takes SEARCH over TCP. */
  takesSearches: boolean;
  /** A failure to connect was logged (once per streak of failures). */
  failLogged: boolean;
  timer: NodeJS.Timeout | undefined;
}

export class CaNameServers {
  private readonly servers: Server[];
  private started = false;
  private closed = false;

  constructor(private readonly config: CaConfig, private readonly events: NameServerEvents) {
    this.servers = config.nameServers.map((ep) => ({
      ep,
      stats: { server: `${ep.host}:${ep.port}`, connected: false, searchesSent: 0, answers: 0 },
      circuit: undefined,
      takesSearches: false,
      failLogged: false,
      timer: undefined,
    }));
  }

  /** Connect to every name server (once; later calls do nothing). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    for (const s of this.servers) this.connect(s);
  }

  /** Send SEARCH requests (`names` of them, already encoded) to every name server that takes them. */
  send(requests: Uint8Array, names: number): void {
    for (const s of this.servers) {
      const c = s.circuit;
      if (!c || !s.takesSearches || !c.open) continue;
      c.circuit.sendEncoded(requests);
      s.stats.searchesSent += names;
    }
  }

  /** Per name server: connected, SEARCH requests sent, answers received. */
  stats(): NameServerStats[] {
    return this.servers.map((s) => ({ ...s.stats }));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.servers) {
      if (s.timer) clearTimeout(s.timer);
      s.timer = undefined;
      s.circuit?.close();
    }
  }

  private connect(s: Server): void {
    if (this.closed) return;
    const { host, port } = s.ep;
    const c = new TcpCircuit(host, port, this.config, {
      onConnect: () => {
        s.stats.connected = true;
        s.failLogged = false;
        log.info(`name server ${s.stats.server} connected`);
      },
      onVersion: (_t, minor) => {
        if (s.circuit !== c || s.takesSearches) return;
        if (minor < TCP_SEARCH_MIN_VERSION) {
          log.warn(`name server ${s.stats.server} speaks CA 4.${minor}: it takes no search over TCP (4.${TCP_SEARCH_MIN_VERSION} or later does)`);
          return;
        }
        s.takesSearches = true;
        this.events.ready();
      },
      onSearchReply: (_t, cid, address, port) => {
        s.stats.answers++;
        this.events.reply(cid, address, port, c.remoteAddress ?? host);
      },
      onClose: (_t, reason, detail) => {
        if (s.circuit !== c) return;
        const was = s.stats.connected;
        s.circuit = undefined;
        s.takesSearches = false;
        s.stats.connected = false;
        if (this.closed || reason === 'closed') return;
        if (was) log.info({ reason, detail }, `name server ${s.stats.server} connection closed`);
        else if (!s.failLogged) {
          s.failLogged = true;
          log.warn(`name server ${s.stats.server}: ${detail} (trying again every ${NAME_SERVER_RETRY_MS / 1000} s)`);
        }
        s.timer = setTimeout(() => {
          s.timer = undefined;
          this.connect(s);
        }, NAME_SERVER_RETRY_MS);
      },
    });
    s.circuit = c;
  }
}
