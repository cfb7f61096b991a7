// Name servers of either protocol (EPICS_CA_NAME_SERVERS, EPICS_PVA_NAME_SERVERS): one TCP
// connection to each listed server, opened with the first search, given a few seconds to connect,
// opened again soon after it drops or fails (a failure logged once per streak), carrying the
// searches once the protocol says the server takes them, and counted. What a connection is, when it
// takes searches and how replies are read belong to the protocol (ca/ and pva/ beside this file).
import { getLogger } from '../log.js';
import type { CloseReason, StreamConnection } from './stream.js';

const log = getLogger('nameservers');

/** Pause before connecting again to a name server that went away or refused. */
export const NAME_SERVER_RETRY_MS = 250;
/** A connection not made by then is given up (a host that does not answer at all) and tried again. */
export const NAME_SERVER_CONNECT_MS = 3000;

/** What the searches over one name server's TCP connection came to (Context.stats()). */
export interface NameServerStats {
  /** "host:port" ("[ip6]:port"), as configured. */
  readonly server: string;
  /** True while the connection is up and takes searches (CA: its server told 4.12 or later; PV Access: validated). */
  connected: boolean;
  /** Search requests sent over it: CA SEARCH requests (one per name), PV Access SEARCH messages. */
  searchesSent: number;
  /** Positive search replies received from it. */
  answers: number;
}

/** What a protocol's connection tells the keeper of its name server. */
export interface NameServerLink {
  /** The server takes searches now (CA: it told a version that does; PVA: the connection is validated). */
  ready(): void;
  /** The server answered a search (a positive reply). */
  answered(): void;
  /** The connection closed. */
  closed(reason: CloseReason, detail: string): void;
}

interface Server<C> {
  readonly stats: NameServerStats;
  conn: C | undefined;
  ready: boolean;
  failLogged: boolean;
  timer: NodeJS.Timeout | undefined;
}

export class NameServers<C extends StreamConnection> {
  private readonly servers: Array<Server<C>>;
  private started = false;
  private closed = false;

  /**
   * `open` makes the protocol's connection to one server, reporting to `link`; `onReady` is
   * called whenever a server (re)connects and takes searches (every pending name is then
   * searched again); `send` writes search bytes on a connection.
   */
  constructor(
    private readonly protocol: string,
    endpoints: ReadonlyArray<{ host: string; port: number; key: string }>,
    private readonly open: (index: number, link: NameServerLink) => C,
    private readonly send: (conn: C, bytes: Uint8Array) => void,
    private readonly onReady: () => void,
  ) {
    this.servers = endpoints.map((ep) => ({
      stats: { server: ep.key, connected: false, searchesSent: 0, answers: 0 },
      conn: undefined,
      ready: false,
      failLogged: false,
      timer: undefined,
    }));
  }

  get size(): number {
    return this.servers.length;
  }

  /** Connect to every name server (once; later calls do nothing). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    this.servers.forEach((_, i) => this.connect(i));
  }

  /** Search bytes (`count` searches) to every name server that takes them now. */
  search(bytes: Uint8Array, count: number): void {
    for (const s of this.servers) {
      if (!s.ready || !s.conn?.open) continue;
      this.send(s.conn, bytes);
      s.stats.searchesSent += count;
    }
  }

  /** Per name server: connected, searches sent, answers. */
  stats(): NameServerStats[] {
    return this.servers.map((s) => ({ ...s.stats }));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.servers) {
      if (s.timer) clearTimeout(s.timer);
      s.timer = undefined;
      s.conn?.close();
    }
  }

  private connect(i: number): void {
    if (this.closed) return;
    const s = this.servers[i]!;
    const link: NameServerLink = {
      ready: () => {
        if (s.conn !== conn || s.ready) return;
        s.ready = true;
        s.stats.connected = true;
        s.failLogged = false;
        log.info(`${this.protocol} name server ${s.stats.server} connected`);
        this.onReady();
      },
      answered: () => {
        if (s.conn === conn) s.stats.answers++;
      },
      closed: (reason, detail) => {
        if (s.conn !== conn) return;
        const was = s.ready;
        s.conn = undefined;
        s.ready = false;
        s.stats.connected = false;
        if (this.closed || reason === 'closed') return;
        if (was) log.info({ reason, detail }, `${this.protocol} name server ${s.stats.server}: connection closed`);
        else if (!s.failLogged) {
          s.failLogged = true;
          log.warn(`${this.protocol} name server ${s.stats.server}: ${detail} (trying again every ${NAME_SERVER_RETRY_MS / 1000} s)`);
        }
        s.timer = setTimeout(() => {
          s.timer = undefined;
          this.connect(i);
        }, NAME_SERVER_RETRY_MS);
      },
    };
    const conn: C = this.open(i, link);
    s.conn = conn;
    conn.limitConnect(NAME_SERVER_CONNECT_MS);
  }
}
