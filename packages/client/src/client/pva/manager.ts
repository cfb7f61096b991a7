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
import type { NameServers } from '../../transport/name-servers.js';
import { pvaNameServers } from '../../transport/pva/name-servers.js';
import { PvaChannel } from './channel.js';

const log = getLogger('pva.context');

export class PvaManager extends ChannelCache<PvaChannel, PvaSearcher> {
  private readonly circuits = new Map<string, PvaCircuit>();
  /** The name servers (EPICS_PVA_NAME_SERVERS), connected with the first search. */
  private readonly nameServers: NameServers<PvaCircuit>;
  private nextCid = 1;

  constructor(readonly config: PvaConfig) {
    super();
    this.nameServers = pvaNameServers(
      config,
      (found, ids, address, port, host) => this.udp?.found(found, ids, address, port, host),
      () => this.udp?.searchAgain(),
    );
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
      const udp = new PvaSearcher(
        this.config,
        (t, host, port) => this.onFound(t, host, port),
        (bytes) => this.nameServers.search(bytes, 1),
      );
      this.udp = udp;
      this.beacons = new PvaBeacons(
        this.config.broadcastPort,
        (server) => {
          if (log.isLevelEnabled('debug'))
            log.debug(
              { server, searching: udp.searching },
              udp.searching ? 'PVA beacon of a new or changed server: searching again' : 'PVA beacon of a new or changed server',
            );
          udp.searchAgain();
        },
        beaconBindings(this.config.interfaces, this.config.searchDestinations),
      );
      this.nameServers.start();
    }
    return this.udp;
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
    this.connectionLost(c.key, reason, detail, (r) => c.session.close(r));
  }

  close(): void {
    if (this.isClosed) return;
    this.closeChannels();
    for (const c of [...this.circuits.values()]) c.close();
    this.circuits.clear();
    this.nameServers.close();
  }

  stats(): ManagerStats {
    return this.statsWith(this.circuits.size, this.nameServers.stats());
  }
}
