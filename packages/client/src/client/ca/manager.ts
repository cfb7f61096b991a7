// The CA channel manager behind a Context: name resolution (one searcher, over UDP and the name
// servers) and the circuit pool (one TCP circuit per server), on the channel cache every protocol
// shares.
import { intToIpv4, MAX_NAME_BYTES } from '../../ca/search.js';
import { paddedLength } from '../../ca/messages.js';
import type { CaConfig } from '../../transport/ca/config.js';
import { TcpCircuit, type CloseReason } from '../../transport/ca/tcp.js';
import { CaBeacons } from '../../transport/ca/beacons.js';
import { caNameServers } from '../../transport/ca/name-servers.js';
import type { NameServers } from '../../transport/name-servers.js';
import { UdpSearcher, type SearchTarget } from '../../transport/ca/udp.js';
import { getLogger } from '../../log.js';
import { Channel } from './channel.js';
import { ChannelCache, type ManagerStats } from '../channel-cache.js';
import { BadArgumentError, ClosedError } from '../errors.js';

const log = getLogger('ca.context');

export class ChannelManager extends ChannelCache<Channel, UdpSearcher> {
  private readonly circuits = new Map<string, TcpCircuit>();
  private nextCid = 1;
  /** The circuit the last search answer pointed to (answers come in runs from one server). */
  private lastCircuit: TcpCircuit | undefined;
  private lastAddr = -1;
  private lastPort = -1;
  private lastFrom = '';
  /** The name servers (EPICS_CA_NAME_SERVERS), connected with the first search. */
  private readonly nameServers: NameServers<TcpCircuit> | undefined;

  constructor(readonly config: CaConfig) {
    super();
    if (config.nameServers.length) {
      this.nameServers = caNameServers(
        config,
        (cid, address, port, host) => this.udp?.foundOverTcp(cid, address, port, host),
        () => this.udp?.searchAgain(),
      );
    }
  }

  /** Validate a name and take a reference on its channel (creating and searching it). */
  acquire(name: string): Channel {
    if (this.isClosed) throw new ClosedError(undefined, typeof name === 'string' ? name : undefined);
    if (typeof name !== 'string' || name.length === 0) throw new BadArgumentError('the PV name is empty');
    const ch = this.channels.get(name) ?? this.newChannel(name);
    ch.retain();
    return ch;
  }

  /** The cached channel of `name` when it is connected (no reference taken), for a one-message write. */
  connectedChannel(name: string): Channel | undefined {
    const ch = this.isClosed ? undefined : this.channels.get(name);
    return ch?.connected && ch.transport ? ch : undefined;
  }

  private newChannel(name: string): Channel {
    // One pass over the name: no NUL, and its length on the wire.
    let ascii = true;
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c === 0) throw new BadArgumentError('the PV name contains a NUL character', name);
      if (c > 127) ascii = false;
    }
    const padded = ascii ? (name.length + 8) & ~7 : paddedLength(name);
    if (padded > MAX_NAME_BYTES + 1) {
      const bytes = new TextEncoder().encode(name).length;
      throw new BadArgumentError(`the PV name is ${bytes} bytes long; at most ${MAX_NAME_BYTES} fit a search request`, name);
    }
    const cid = this.nextCid;
    this.nextCid = (this.nextCid + 1) >>> 0 || 1;
    const ch = new Channel(this, cid, name, padded);
    this.channels.set(name, ch);
    this.searcher().add(ch);
    return ch;
  }

  /** Many acquire() calls follow over several event-loop turns (see UdpSearcher.cork). */
  corkSearch(): void {
    if (!this.isClosed) this.searcher().cork();
  }

  uncorkSearch(): void {
    this.udp?.uncork();
  }

  protected searcher(): UdpSearcher {
    if (!this.udp) {
      const ns = this.nameServers;
      const udp = new UdpSearcher(
        this.config,
        (t, addr, port, from) => this.onFound(t, addr, port, from),
        ns && ((b, n) => ns.search(b, n)),
      );
      this.udp = udp;
      // Beacons come through the repeater over UDP: with no UDP destination, no UDP at all.
      if (this.config.searchDestinations.length) {
        this.beacons = new CaBeacons(this.config.repeaterPort, this.config.beaconPeriodMs, (server) => {
          if (udp.searching && log.isLevelEnabled('debug'))
            log.debug({ server, searching: udp.searching }, 'beacon anomaly: searching again');
          udp.searchAgain();
        });
      }
      ns?.start();
    }
    return this.udp;
  }

  private onFound(t: SearchTarget, addr: number, port: number, from: string): void {
    const ch = t as Channel;
    if (ch.state !== 'searching' || this.isClosed) return;
    const wildcard = addr === 0xffffffff || addr === 0;
    let c = this.lastCircuit;
    if (!c?.open || addr !== this.lastAddr || port !== this.lastPort || (wildcard && from !== this.lastFrom)) {
      const key = `${wildcard ? from : intToIpv4(addr)}:${port}`;
      c = this.circuits.get(key);
      if (!c) {
        c = new TcpCircuit(wildcard ? from : intToIpv4(addr), port, this.config, {
          onConnect: () => {},
          onClose: (tc, reason, detail) => this.onCircuitClose(tc, reason, detail),
        });
        this.circuits.set(key, c);
      }
      this.lastCircuit = c;
      this.lastAddr = addr;
      this.lastPort = port;
      this.lastFrom = from;
    }
    ch.found(c);
  }

  private onCircuitClose(t: TcpCircuit, reason: CloseReason, detail: string): void {
    if (this.circuits.get(t.key) === t) this.circuits.delete(t.key);
    if (this.lastCircuit === t) this.lastCircuit = undefined;
    if (reason !== 'closed' && log.isLevelEnabled('info')) log.info({ server: t.key, reason, detail }, 'circuit closed');
    this.connectionLost(t.key, reason, detail, (r) => t.circuit.close(r));
  }

  /** Close every holder, circuit and socket and fail whatever is pending. */
  close(): void {
    if (this.isClosed) return;
    this.closeChannels();
    this.nameServers?.close();
    this.lastCircuit = undefined;
    for (const t of [...this.circuits.values()]) t.close();
    this.circuits.clear();
  }

  stats(): ManagerStats {
    return this.statsWith(this.circuits.size, this.nameServers?.stats() ?? []);
  }
}
