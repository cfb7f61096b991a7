// Hearing that a PV Access server has (re)appeared (a new GUID or change count in its beacon), so
// that names not yet found are searched for again at once instead of after their backoff; and
// taking part in the local forwarding of unicast datagrams among the PVA processes of the host.
import dgram from 'node:dgram';
import os from 'node:os';
import { Cmd, HEADER_SIZE } from '../../pva/constants.js';
import { forwardedForm, LOCAL_MCAST_GROUP, readDatagram } from '../../pva/forward.js';
import { decodeMessage } from '../../pva/messages.js';
import { ipv4Of } from '../../pva/messages-session.js';
import { getLogger } from '../../log.js';
import { broadcastAddresses, type Ifaces } from '../config.js';

const log = getLogger('beacons');

/** Servers not heard from for this long are forgotten. */
const SERVER_MAX_AGE_MS = 3_600_000;

/** What a socket bound to the broadcast port is for. */
type Role = 'unicast' | 'broadcast' | 'local';

/** The addresses to bind on the broadcast port: every IPv4 address of the host and every broadcast address. */
export function beaconBindings(ifaces: Ifaces): Array<{ host: string; role: Role }> {
  const out: Array<{ host: string; role: Role }> = [];
  for (const list of Object.values(ifaces)) {
    for (const a of list ?? []) if (a.family === 'IPv4' || a.family === 4) out.push({ host: a.address, role: 'unicast' });
  }
  for (const host of broadcastAddresses(ifaces)) out.push({ host, role: 'broadcast' });
  out.push({ host: LOCAL_MCAST_GROUP, role: 'local' });
  return out;
}

/**
 * PV Access beacons on the broadcast port, however they are addressed: one socket bound to each
 * broadcast address of the host, one to each of its IPv4 addresses (beacons sent by unicast to
 * this host) and one in the local multicast group 224.0.0.128 on the loopback interface (what the
 * host's PVA processes forward). Each shares the port (SO_REUSEADDR) with the host's PVA servers
 * and clients. A unicast datagram reaches only one of the sockets bound to its address, here the
 * most specific one: a SEARCH or BEACON received that way is forwarded to the local group behind
 * an ORIGIN_TAG, as pvxs does, so that every PVA server and client of the host still sees it.
 */
export class PvaBeacons {
  private readonly socks: dgram.Socket[] = [];
  private local: dgram.Socket | undefined;
  /** Per server ("host:port"): its GUID and change count as last heard. */
  private readonly servers = new Map<string, { guid: string; changes: number; at: number }>();
  /** Datagrams forwarded to the local group (diagnostics and tests). */
  forwarded = 0;

  constructor(
    private readonly port: number,
    private readonly onAnomaly: (server: string) => void,
    ifaces: Ifaces = os.networkInterfaces() as Ifaces,
  ) {
    for (const b of beaconBindings(ifaces)) this.open(b.host, b.role);
  }

  private open(host: string, role: Role): void {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: true });
    s.on('error', (err) => {
      log.debug({ host, port: this.port, err: err.message }, 'cannot hear PVA beacons there');
      this.drop(s);
    });
    s.on('message', (msg, from) => this.onMessage(msg, from.address, role === 'unicast' ? host : undefined));
    s.bind(this.port, host, () => {
      s.unref();
      if (role !== 'local') return;
      try {
        s.addMembership(LOCAL_MCAST_GROUP, '127.0.0.1');
        s.setMulticastInterface('127.0.0.1');
        s.setMulticastTTL(1);
        s.setMulticastLoopback(true);
        this.local = s;
      } catch (err) {
        log.debug({ err: (err as Error).message }, 'cannot join the local PVA multicast group: unicast beacons reach this process alone');
        this.drop(s);
      }
    });
    this.socks.push(s);
  }

  private drop(s: dgram.Socket): void {
    const i = this.socks.indexOf(s);
    if (i >= 0) this.socks.splice(i, 1);
    if (this.local === s) this.local = undefined;
    try {
      s.close();
    } catch {
      // already closed
    }
  }

  /** A datagram from `from`; `dest` is set when it came by unicast to that address of this host. */
  private onMessage(msg: Buffer, from: string, dest: string | undefined): void {
    const d = readDatagram(msg);
    // Forwarded, it comes back here through the group like any other forwarded copy: one path, in order.
    if (dest !== undefined && (d.command === Cmd.SEARCH || d.command === Cmd.BEACON) && this.forward(msg, dest, from)) return;
    if (d.command !== Cmd.BEACON) return; // searches are for the servers
    const h = d.header;
    const m = decodeMessage(h, msg.subarray(d.offset + HEADER_SIZE, d.offset + HEADER_SIZE + h.payloadSize));
    if (m.type !== 'Beacon') return;
    const ip = ipv4Of(m.address);
    const server = `${!ip || ip === '0.0.0.0' ? from : ip}:${m.port}`;
    const guid = Buffer.from(m.guid).toString('hex');
    const now = Date.now();
    const last = this.servers.get(server);
    this.servers.set(server, { guid, changes: m.changeCount, at: now });
    if (!last || last.guid !== guid || last.changes !== m.changeCount) this.onAnomaly(server);
    if (this.servers.size > 64) for (const [k, s] of this.servers) if (now - s.at > SERVER_MAX_AGE_MS) this.servers.delete(k);
  }

  /** Pass a unicast datagram on to the local group; false when it cannot be. */
  private forward(msg: Buffer, dest: string, from: string): boolean {
    const out = this.local && forwardedForm(msg, dest, from);
    if (!out) return false;
    this.forwarded++;
    this.local!.send(out, this.port, LOCAL_MCAST_GROUP, (err) => {
      if (err) log.debug({ err: err.message }, 'could not forward a PVA datagram to the local group');
    });
    return true;
  }

  close(): void {
    for (const s of [...this.socks]) this.drop(s);
  }
}
