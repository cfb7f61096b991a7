// The PV Access side of a Context: name resolution (UDP searcher and TCP name servers) and one
// connection per server, on the channel cache every protocol shares.
import { getLogger } from '../../log.js';
import type { PvaConfig } from '../../transport/pva/config.js';
import { hostPort } from '../../transport/addresses.js';
import { PvaCircuit } from '../../transport/pva/tcp.js';
import type { CloseReason } from '../../transport/stream.js';
import { beaconBindings, PvaBeacons } from '../../transport/pva/beacons.js';
import { PvaSearcher, type PvaSearchTarget } from '../../transport/pva/udp.js';
import { BadArgumentError, ClosedError } from '../errors.js';
import { ChannelCache, type ManagerStats } from '../channel-cache.js';
import type { NameServerStats } from '../../transport/search-scheduler.js';
import { PvaChannel } from './channel.js';

const log = getLogger('pva.context');

/** Pause before reconnecting to a name server that went away. */
const NAME_SERVER_RETRY_MS = 1000;

export class PvaManager extends ChannelCache<PvaChannel, PvaSearcher> {
  private readonly circuits = new Map<string, PvaCircuit>();
  private readonly nameServers: Array<PvaCircuit | undefined>;
  /** Per name server: SEARCH messages sent over it and positive replies from it. */
  private readonly nameServerCounts: Array<{ searchesSent: number; answers: number }>;
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private nextCid = 1;

  constructor(readonly config: PvaConfig) {
    super();
    this.nameServers = config.nameServers.map(() => undefined);
    this.nameServerCounts = config.nameServers.map(() => ({ searchesSent: 0, answers: 0 }));
  }

  /** Take a reference on a name's channel (creating and searching it). */
  acquire(name: string): PvaChannel {
    if (this.isClosed) throw new ClosedError(undefined, name);
    if (typeof name !== 'string' || name.length === 0) throw new BadArgumentError('the PV name is empty');
    let ch = this.channels.get(name);
    if (!ch) {
      if (name.includes('\0')) throw new BadArgumentError('the PV name contains a NUL character', name);
      const cid = this.nextCid;
      this.nextCid = (this.nextCid + 1) & 0x7fffffff || 1;
      ch = new PvaChannel(this, cid, name);
      this.channels.set(name, ch);
      this.searcher().add(ch);
    }
    ch.retain();
    return ch;
  }

  protected searcher(): PvaSearcher {
    if (!this.udp) {
      const udp = new PvaSearcher(this.config, (t, host, port) => this.onFound(t, host, port), (bytes) => this.tcpSearch(bytes));
      this.udp = udp;
      this.beacons = new PvaBeacons(this.config.broadcastPort, (server) => {
        if (udp.searching && log.isLevelEnabled('debug')) log.debug({ server, searching: udp.searching }, 'PVA beacon of a new or changed server: searching again');
        udp.searchAgain();
      }, beaconBindings(this.config.interfaces, this.config.searchDestinations));
      this.config.nameServers.forEach((_, i) => this.connectNameServer(i));
    }
    return this.udp;
  }

  private tcpSearch(bytes: Uint8Array): void {
    this.nameServers.forEach((ns, i) => {
      if (!ns?.ready) return;
      ns.session.sendRaw(bytes);
      this.nameServerCounts[i]!.searchesSent++;
    });
  }

  private connectNameServer(i: number): void {
    if (this.isClosed) return;
    const ep = this.config.nameServers[i]!;
    const c = new PvaCircuit(ep.host, ep.port, this.config, {
      onReady: () => this.udp?.searchAgain(),
      onClose: (nc, reason, detail) => {
        this.nameServers[i] = undefined;
        if (reason === 'closed' || this.isClosed) return;
        log.info({ server: nc.key, reason, detail }, 'name server connection closed');
        const t = setTimeout(() => {
          this.retryTimers.delete(t);
          this.connectNameServer(i);
        }, NAME_SERVER_RETRY_MS);
        this.retryTimers.add(t);
      },
      // The server's address, or (:: / 0.0.0.0) the name server's own; port 0: the name server's.
      searchResponse: (m) => {
        if (m.found) this.nameServerCounts[i]!.answers++;
        this.udp?.found(m.found, m.ids, m.address, m.port || ep.port, ep.host);
      },
    });
    this.nameServers[i] = c;
  }

  private onFound(t: PvaSearchTarget, host: string, port: number): void {
    const ch = t as PvaChannel;
    if (ch.state !== 'searching' || this.isClosed) return;
    const key = hostPort(host, port);
    let c = this.circuits.get(key);
    if (!c) {
      c = new PvaCircuit(host, port, this.config, {
        onReady: () => {},
        onClose: (pc, reason, detail) => this.onCircuitClose(pc, reason, detail),
      });
      this.circuits.set(key, c);
    }
    ch.found(c);
  }

  private onCircuitClose(c: PvaCircuit, reason: CloseReason, detail: string): void {
    if (this.circuits.get(c.key) === c) this.circuits.delete(c.key);
    if (reason !== 'closed') log.info({ server: c.key, reason, detail }, 'PVA connection closed');
    this.connectionLost(reason, detail, (r) => c.session.close(r));
  }

  close(): void {
    if (this.isClosed) return;
    this.closeChannels();
    for (const t of this.retryTimers) clearTimeout(t);
    for (const c of [...this.circuits.values()]) c.close();
    this.circuits.clear();
    for (const ns of this.nameServers) ns?.close();
  }

  stats(): ManagerStats {
    const ns: NameServerStats[] = this.config.nameServers.map((ep, i) => ({
      server: `${ep.host}:${ep.port}`, connected: !!this.nameServers[i]?.ready, ...this.nameServerCounts[i]!,
    }));
    return this.statsWith(this.circuits.size, ns);
  }
}
