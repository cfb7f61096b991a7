// The Channel Access server's I/O: a TCP listener whose circuits run CaServerCircuit, a UDP
// socket on the same port answering searches for the names the provider has (NOT_FOUND only where
// a search asks for a reply), and beacons to the beacon addresses at the EPICS schedule.
import type dgram from 'node:dgram';
import type net from 'node:net';
import os from 'node:os';
import { DEFAULT_REPEATER_PORT, DEFAULT_SERVER_PORT, DO_REPLY, CA_MINOR_PROTOCOL_REVISION } from '../../ca/constants.js';
import { Framer } from '../../ca/framer.js';
import { decodeRequest, encodeMessage } from '../../ca/messages.js';
import { getLogger } from '../../log.js';
import { ByteWriter } from '../../wire/byte-writer.js';

import type { Ifaces } from '../../transport/config.js';
import {
  addressList,
  batchedWrites,
  beaconList,
  bindUdp,
  broadcastOf,
  env,
  interfaceList,
  joinGroup,
  listenTcp,
  SocketServer,
  targetsOf,
} from '../net.js';
import { CaServerCircuit, type PvProvider } from './circuit.js';

const log = getLogger('server.ca');

export interface CaServerOptions {
  /** TCP and UDP port: EPICS_CAS_SERVER_PORT, else EPICS_CA_SERVER_PORT, else 5064 (0: any free TCP port). */
  port?: number;
  /**
   * Address to listen on; default EPICS_CAS_INTF_ADDR_LIST, as RSRV reads it (every address in it
   * served, TCP and UDP, and each multicast group in it joined), else all interfaces.
   */
  host?: string;
  /**
   * Where beacons go (default EPICS_CAS_BEACON_ADDR_LIST, else EPICS_CA_ADDR_LIST, and the
   * broadcast addresses of the interfaces served unless EPICS_CAS_AUTO_BEACON_ADDR_LIST, else
   * EPICS_CA_AUTO_ADDR_LIST, is NO); port EPICS_CA_REPEATER_PORT.
   */
  beaconAddresses?: string[];
  /** The longest time between beacons, s (EPICS_CAS_BEACON_PERIOD, default 15). */
  beaconPeriodS?: number;
  /** Bytes of a circuit's unsent output above which its updates wait (default 4 MB). */
  maxQueuedBytes?: number;
  /** Largest DBR payload served, bytes (EPICS_CA_MAX_ARRAY_BYTES, default 16384). */
  maxArrayBytes?: number;
}

export class CaServer extends SocketServer {
  private beaconId = 0;
  /** The addresses served (0.0.0.0: every interface). */
  private hosts = ['0.0.0.0'];
  private readonly maxArrayBytes: number;
  port = 0;

  private constructor(
    private readonly provider: PvProvider,
    private readonly opts: CaServerOptions,
  ) {
    super('CA', log);
    this.maxArrayBytes = opts.maxArrayBytes ?? Number(env('EPICS_CA_MAX_ARRAY_BYTES') ?? 16384);
  }

  /** Listen on TCP and UDP and start the beacons. */
  static async start(provider: PvProvider, opts: CaServerOptions = {}): Promise<CaServer> {
    const s = new CaServer(provider, opts);
    await s.open(() => s.listen());
    return s;
  }

  private async listen(): Promise<void> {
    const { hosts, groups } = interfaceList(this.opts.host !== undefined ? [this.opts.host] : addressList('EPICS_CAS_INTF_ADDR_LIST'), log);
    this.hosts = hosts;
    let port = this.opts.port ?? Number(env('EPICS_CAS_SERVER_PORT') ?? env('EPICS_CA_SERVER_PORT') ?? DEFAULT_SERVER_PORT);
    // As RSRV: per address a TCP listener and a UDP socket bound to it. A socket bound to one
    // address hears neither broadcasts nor multicast, so on a given address one socket more per
    // subnet hears its broadcast address, and one per group the group (joined on each address's
    // interface); their searches are answered from the first address's socket there.
    const heard = new Map<string, dgram.Socket>();
    const hear = async (address: string, answer: dgram.Socket): Promise<dgram.Socket> => {
      let s = heard.get(address);
      if (s) return s;
      s = this.moreSocket();
      heard.set(address, s);
      s.on('message', (msg, rinfo) => this.onSearch(msg, rinfo, answer));
      await bindUdp(s, port, address, true);
      return s;
    };
    for (const [i, host] of hosts.entries()) {
      const tcp = i === 0 ? this.tcp : this.moreListener();
      port = this.port = await listenTcp(tcp, port, host);
      const udp = i === 0 ? this.udp : this.moreSocket();
      udp.on('message', (msg, rinfo) => this.onSearch(msg, rinfo, udp));
      await bindUdp(udp, port, host, true);
      if (host === '0.0.0.0') {
        for (const g of groups) joinGroup(udp, g, host, log);
        continue;
      }
      const bcast = broadcastOf(host, os.networkInterfaces() as Ifaces);
      if (bcast !== undefined) await hear(bcast, udp);
      for (const g of groups) joinGroup(await hear(g, udp), g, host, log);
    }
    await this.startBeacons();
  }

  protected serve(s: net.Socket, refuse: (reason: string) => void): () => void {
    const circuit: CaServerCircuit = new CaServerCircuit(
      this.provider,
      {
        wantFlush: batchedWrites(s, () => circuit.take(), {
          limit: this.opts.maxQueuedBytes ?? 4 * 1024 * 1024,
          set: (on) => circuit.setBlocked(on),
        }),
      },
      s.remoteAddress ?? '',
      { port: this.port, maxArrayBytes: this.maxArrayBytes },
    );
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type === 'Invalid') return refuse(m.reason);
        circuit.receive(m);
      },
      refuse,
      // A request carries at most an array of EPICS_CA_MAX_ARRAY_BYTES (a write) and its DBR header.
      this.maxArrayBytes + 512,
    );
    s.on('data', (d) => framer.push(d));
    return () => circuit.close();
  }

  /** A search datagram: a reply naming this server's port for each name it has. */
  private onSearch(msg: Buffer, rinfo: dgram.RemoteInfo, udp: dgram.Socket): void {
    const w = new ByteWriter();
    let answered = false;
    const framer = new Framer(
      (h, p) => {
        const m = decodeRequest(h, p);
        if (m.type !== 'SearchRequest') return;
        if (this.provider.find(m.name)) {
          if (!answered) encodeMessage(w, { type: 'VersionResponse', version: CA_MINOR_PROTOCOL_REVISION, priority: 0, sequence: 0 });
          answered = true;
          encodeMessage(w, {
            type: 'SearchResponse',
            port: this.port,
            address: 0xffffffff,
            cid: m.cid,
            version: CA_MINOR_PROTOCOL_REVISION,
          });
        } else if (m.reply === DO_REPLY) {
          encodeMessage(w, { type: 'NotFoundResponse', cid: m.cid, version: CA_MINOR_PROTOCOL_REVISION });
        }
      },
      () => {},
    );
    framer.push(msg);
    if (w.length) udp.send(w.take(), rinfo.port, rinfo.address);
  }

  /** Beacons at 0.02 s doubling up to the beacon period, as RSRV sends them after it starts, from a socket of their own. */
  private async startBeacons(): Promise<void> {
    const list = beaconList(
      this.opts.beaconAddresses,
      this.hosts,
      ['EPICS_CAS_BEACON_ADDR_LIST', 'EPICS_CA_ADDR_LIST'],
      ['EPICS_CAS_AUTO_BEACON_ADDR_LIST', 'EPICS_CA_AUTO_ADDR_LIST'],
    );
    const period = this.opts.beaconPeriodS ?? Number(env('EPICS_CAS_BEACON_PERIOD') ?? 15);
    const repeater = Number(env('EPICS_CA_REPEATER_PORT') ?? DEFAULT_REPEATER_PORT);
    const targets = targetsOf(list, repeater);
    if (!targets.length) return;
    const udp = this.moreSocket();
    await bindUdp(udp, 0, '0.0.0.0');
    let delay = 0.01;
    this.beacons(
      () => {
        const w = new ByteWriter();
        encodeMessage(w, { type: 'Beacon', version: CA_MINOR_PROTOCOL_REVISION, port: this.port, beaconId: this.beaconId++, address: 0 });
        const b = w.take();
        for (const t of targets) udp.send(b, t.port, t.host);
      },
      () => (delay = Math.min(delay * 2, period)),
    );
  }
}
