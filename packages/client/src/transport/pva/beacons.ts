// Hearing that a PV Access server has (re)appeared (a new GUID or change count in its beacon), so
// that names not yet found are searched for again at once instead of after their backoff; and
// taking part in the local forwarding of unicast datagrams among the PVA processes of the host.
import dgram from 'node:dgram';
import os from 'node:os';
import { Cmd, HEADER_SIZE } from '../../pva/constants.js';
import { forwardedForm, LOCAL_MCAST_GROUP, readDatagram } from '../../pva/forward.js';
import { decodeMessage } from '../../pva/messages.js';
import { addressOf } from '../../pva/messages-session.js';
import { getLogger } from '../../log.js';
import { hostPort, multicastInterface, type PvaAddress } from '../addresses.js';
import { broadcastAddresses, type Ifaces, type SearchDestination } from '../config.js';

const log = getLogger('beacons');

/** Servers not heard from for this long are forgotten. */
const SERVER_MAX_AGE_MS = 3_600_000;

/**
 * What a socket on the broadcast port is for: `unicast` hears datagrams sent to one address of
 * this host (an IPv4 one forwards them to the local group), `broadcast` one broadcast address,
 * `local` the local group 224.0.0.128 on loopback, `group` a multicast group of the lists.
 */
type Role = 'unicast' | 'broadcast' | 'local' | 'group';

export interface Binding {
  family: 4 | 6;
  /** The address to bind ("ff02::1%eth0" for a link-local group). */
  host: string;
  role: Role;
  /** A group's: the interface to join it on (an address; "::%name" for IPv6), or the default. */
  join?: string;
}

const isIpv4 = (a: { family: string | number }): boolean => a.family === 'IPv4' || a.family === 4;

/**
 * Where to listen on the broadcast port, as pvxs's client does from EPICS_PVA_INTF_ADDR_LIST:
 * for 0.0.0.0 (the default) every IPv4 address of the host and every broadcast address, for an
 * IPv4 address that one and its interface's broadcast address, for an IPv6 address that one (an
 * IPv6 datagram is not forwarded, so [::] binds no IPv6 address: one would take the unicast
 * searches meant for an IPv6 server of the host); the local group when any IPv4 address is
 * bound; and every multicast group of the interface and search lists, joined on its interface.
 */
export function beaconBindings(
  interfaces: readonly PvaAddress[],
  groups: readonly SearchDestination[],
  ifaces: Ifaces = os.networkInterfaces() as Ifaces,
): Binding[] {
  const out: Binding[] = [];
  const seen = new Set<string>();
  const add = (b: Binding): void => {
    const k = `${b.host}|${b.join ?? ''}`;
    if (seen.has(k)) return;
    seen.add(k);
    out.push(b);
  };
  for (const i of interfaces) {
    if (i.multicast) continue;
    if (i.family === 6) {
      if (i.host !== '::') add({ family: 6, host: i.host, role: 'unicast' });
      continue;
    }
    const any = i.host === '0.0.0.0';
    const mine: Ifaces = {};
    for (const [name, list] of Object.entries(ifaces)) mine[name] = list?.filter((a) => isIpv4(a) && (any || a.address === i.host));
    for (const list of Object.values(mine)) for (const a of list ?? []) add({ family: 4, host: a.address, role: 'unicast' });
    for (const host of broadcastAddresses(mine)) add({ family: 4, host, role: 'broadcast' });
  }
  if (out.some((b) => b.family === 4)) add({ family: 4, host: LOCAL_MCAST_GROUP, role: 'local' });
  const multicast = [...interfaces.filter((i) => i.multicast), ...groups.filter((g) => g.multicast)];
  for (const g of multicast) {
    const family = g.family ?? 4;
    const join = g.iface === undefined ? undefined : multicastInterface(family, g.iface, ifaces);
    // A link-local IPv6 group is bound with its interface's scope.
    const scope = family === 6 && join?.startsWith('::%') && /^ff[0-9a-f]2:/i.test(g.host) ? join.slice(2) : '';
    add({ family, host: g.host + scope, role: 'group', ...(join !== undefined ? { join } : {}) });
  }
  return out;
}

/** Join a socket bound to the local group's address to that group, on loopback, and send there (throws where it cannot). */
export function joinLocalGroup(s: dgram.Socket): void {
  s.addMembership(LOCAL_MCAST_GROUP, '127.0.0.1');
  s.setMulticastInterface('127.0.0.1');
  s.setMulticastTTL(1);
  s.setMulticastLoopback(true);
}

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
    bindings: readonly Binding[],
  ) {
    for (const b of bindings) this.open(b);
  }

  private open({ family, host, role, join }: Binding): void {
    const s = dgram.createSocket({ type: family === 6 ? 'udp6' : 'udp4', reuseAddr: true, ipv6Only: family === 6 });
    s.on('error', (err) => {
      log.debug({ host, port: this.port, err: err.message }, 'cannot hear PVA beacons there');
      this.drop(s);
    });
    const forwardAs = role === 'unicast' && family === 4 ? host : undefined;
    s.on('message', (msg, from) => this.onMessage(msg, from.address, forwardAs));
    s.bind(this.port, host, () => {
      s.unref();
      try {
        if (role === 'group') s.addMembership(host.split('%')[0]!, join);
        if (role !== 'local') return;
        joinLocalGroup(s);
        this.local = s;
      } catch (err) {
        log.debug(
          { host, err: (err as Error).message },
          role === 'local'
            ? 'cannot join the local PVA multicast group: unicast beacons reach this process alone'
            : 'cannot join that multicast group: its beacons are not heard',
        );
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
    const server = hostPort(addressOf(m.address) ?? from.split('%')[0]!, m.port);
    const guid = Buffer.from(m.guid).toString('hex');
    const now = Date.now();
    const last = this.servers.get(server);
    this.servers.set(server, { guid, changes: m.changeCount, at: now });
    if (!last || last.guid !== guid || last.changes !== m.changeCount) this.onAnomaly(server);
    if (this.servers.size > 64) for (const [k, s] of this.servers) if (now - s.at > SERVER_MAX_AGE_MS) this.servers.delete(k);
  }

  /** True when beacons of `server` ("host:port", "[ip6]:port": its TCP address) reach this client. */
  heard(server: string): boolean {
    return this.servers.has(server);
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
