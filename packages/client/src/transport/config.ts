// What both protocols' configurations share: a Context's options, address lists and search
// destinations (with broadcast addresses computed from os.networkInterfaces()-shaped data).
import os from 'node:os';

/** A host and port. */
export interface Endpoint {
  host: string;
  port: number;
}

/** Options of a Context; anything not given comes from the environment, then the CA defaults. */
export interface ContextOptions {
  /** Search destinations, "host" or "host:port" (EPICS_CA_ADDR_LIST). */
  addrList?: string[] | string;
  /** Add the interfaces' broadcast addresses (EPICS_CA_AUTO_ADDR_LIST, default true). */
  autoAddrList?: boolean;
  /**
   * Channel Access servers searched over TCP, "host[:port]" (EPICS_CA_NAME_SERVERS; the port
   * defaults to the server port, 5064): one connection to each, reconnected when it drops, carries
   * the SEARCH requests every search datagram carries (servers of protocol 4.12 or later answer).
   * With an empty address list and the automatic one off, the CA client then uses no UDP at all.
   */
  caNameServers?: string[] | string;
  /** Server port for searches (EPICS_CA_SERVER_PORT, default 5064). */
  serverPort?: number;
  /** Repeater port (EPICS_CA_REPEATER_PORT, default 5065): beacons come through the repeater there. */
  repeaterPort?: number;
  /** Seconds between a server's beacons once it is up (EPICS_CA_BEACON_PERIOD, default 15). */
  beaconPeriod?: number;
  /** Seconds of silence before a circuit is probed with ECHO (EPICS_CA_CONN_TMO, default 30). */
  connTimeout?: number;
  /** Largest array payload accepted, in bytes (EPICS_CA_MAX_ARRAY_BYTES, default 16384). */
  maxArrayBytes?: number;
  /** Longest interval between search retries, seconds (EPICS_CA_MAX_SEARCH_PERIOD, default 300, min 60). */
  maxSearchPeriod?: number;
  /** Environment to read instead of process.env. */
  env?: Record<string, string | undefined>;
  /** Names sent in CLIENT_NAME / HOST_NAME. */
  clientName?: string;
  hostName?: string;
  /** Search datagrams allowed in flight before waiting for replies (pacing). */
  searchWindow?: number;
  /**
   * PV Access: search destinations in pvxs's syntax (EPICS_PVA_ADDR_LIST): "host", "host:port",
   * "[ip6]", "[ip6]:port", a multicast group with ",TTL" and "@iface" ("224.0.1.1,1@eth0",
   * "[ff02::1:1]:5076@eth0").
   */
  pvaAddrList?: string[] | string;
  /** PV Access: add the interfaces' broadcast addresses (EPICS_PVA_AUTO_ADDR_LIST, default true). */
  pvaAutoAddrList?: boolean;
  /** PV Access: UDP port searches go to (EPICS_PVA_BROADCAST_PORT, default 5076). */
  pvaBroadcastPort?: number;
  /** PV Access: servers searched over TCP, "host[:port]" or "[ip6]:port" (EPICS_PVA_NAME_SERVERS). */
  pvaNameServers?: string[] | string;
  /** PV Access: use IPv6 destinations and name servers (PVXS_ENABLE_IPV6, default true). */
  pvaEnableIpv6?: boolean;
  /** PV Access: local interface addresses, "0.0.0.0", "[::]" or an interface's address (EPICS_PVA_INTF_ADDR_LIST). */
  pvaInterfaces?: string[] | string;
  /** PV Access: seconds of silence before a connection is probed with ECHO (EPICS_PVA_CONN_TMO, default 30). */
  pvaConnTimeout?: number;
  /**
   * Secure PV Access: the PKCS#12 keychain (EPICS_PVA_TLS_KEYCHAIN, as core-pva also
   * "path;password"), or false for no TLS whatever the environment. With a keychain the client
   * offers TLS in its searches and speaks TLS to the servers that answer with it.
   */
  pvaTlsKeychain?: string | false;
  /** Secure PV Access: the keychain's password (else EPICS_PVA_TLS_KEYCHAIN_PWD_FILE's content, else ""). */
  pvaTlsKeychainPassword?: string;
  /** Secure PV Access: refuse servers that answer with plain TCP (default false: use them). */
  pvaTlsRequired?: boolean;
}

export function num(v: string | undefined, fallback: number): number {
  if (v === undefined || v.trim() === '') return fallback;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/** Parse "host[:port]" entries separated by whitespace (or given as a list). */
export function parseAddrList(list: string[] | string | undefined, defaultPort: number): Endpoint[] {
  if (list === undefined) return [];
  const items = Array.isArray(list) ? list : list.split(/\s+/);
  const out: Endpoint[] = [];
  for (const raw of items) {
    const s = raw.trim();
    if (!s) continue;
    const m = /^([^:]+)(?::(\d+))?$/.exec(s);
    if (!m) continue;
    const host = m[1] === 'localhost' ? '127.0.0.1' : m[1]!;
    const port = m[2] ? Number(m[2]) : defaultPort;
    if (port > 0 && port < 65536) out.push({ host, port });
  }
  return out;
}

/** Interface data as os.networkInterfaces() gives it. */
export type Ifaces = Record<string, Array<{ address: string; netmask: string; family: string | number; internal: boolean }> | undefined>;

/**
 * A search destination; `broadcast` when it is a broadcast address of this host's interfaces.
 * PV Access destinations may also be IPv6 (`family` 6, `host` without brackets) or multicast
 * groups, sent through `iface` with `ttl` hops (the system's defaults when absent).
 */
export interface SearchDestination extends Endpoint {
  broadcast: boolean;
  family?: 4 | 6;
  multicast?: boolean;
  ttl?: number;
  iface?: string;
}

/**
 * Broadcast addresses of the up IPv4 interfaces, as libca and pvxs find them: the loopback
 * interface is left out, and so is an address with no broadcast domain (a /32 or /31). Pure.
 */
export function broadcastAddresses(ifaces: Ifaces): string[] {
  const out = new Set<string>();
  for (const list of Object.values(ifaces)) {
    for (const a of list ?? []) {
      if ((a.family !== 'IPv4' && a.family !== 4) || a.internal) continue;
      const ip = a.address.split('.').map(Number);
      const mask = a.netmask.split('.').map(Number);
      if (ip.length !== 4 || mask.length !== 4 || mask[3]! >= 254) continue;
      out.add(ip.map((b, i) => (b | (~mask[i]! & 255)) & 255).join('.'));
    }
  }
  return [...out];
}

/** True when every destination is on the loopback interface (a search datagram may then be large). */
export function onlyLoopback(dests: readonly Endpoint[]): boolean {
  return dests.length > 0 && dests.every((d) => d.host.startsWith('127.') || d.host === 'localhost' || d.host === '::1');
}

export function isNo(v: string | undefined): boolean {
  return v !== undefined && /^(no|false|0)$/i.test(v.trim());
}

/**
 * Search destinations (shared by CA and PVA): the address list, plus with `auto` the interfaces'
 * broadcast addresses, or 127.0.0.1 where the host has no interface but loopback (as libca does),
 * without repeats. An entry is marked broadcast when it is one of those addresses or
 * 255.255.255.255.
 */
export function searchDestinations(
  list: string[] | string | undefined,
  auto: boolean,
  port: number,
  ifaces: Ifaces = os.networkInterfaces() as Ifaces,
): SearchDestination[] {
  const bcasts = broadcastAddresses(ifaces);
  const dests = parseAddrList(list, port);
  if (auto) {
    for (const host of bcasts) dests.push({ host, port });
    if (bcasts.length === 0) dests.push({ host: '127.0.0.1', port });
  }
  const seen = new Set<string>();
  const out: SearchDestination[] = [];
  for (const d of dests) {
    const k = `${d.host}:${d.port}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ ...d, broadcast: d.host === '255.255.255.255' || bcasts.includes(d.host) });
  }
  return out;
}

/** The user name sent to servers (CA's CLIENT_NAME, PVA's "ca" authentication). */
export function userName(): string {
  try {
    return os.userInfo().username;
  } catch {
    return 'node'; // no user database entry
  }
}
