// PV Access address-list entries in pvxs's syntax (host, host:port, [ip6]:port, with ",TTL@iface"
// for multicast), parsed one at a time, and the per-list warnings for entries that are skipped.
import net from 'node:net';
import { getLogger } from '../log.js';
import type { Ifaces } from './config.js';

const log = getLogger('config');

/** One parsed entry: `host` is the address without brackets (a name stays a name, IPv4 family). */
export interface PvaAddress {
  family: 4 | 6;
  host: string;
  port: number;
  multicast: boolean;
  /** Multicast time-to-live (hops), when given. */
  ttl?: number;
  /** Outgoing interface of a multicast destination: a name (eth0) or an address of the interface. */
  iface?: string;
}

/** An entry that cannot be used, with the one-line reason (naming the entry). */
export interface BadEntry {
  bad: string;
}

export const isBadEntry = (x: PvaAddress | BadEntry): x is BadEntry => 'bad' in x;

/** True for IPv4 224.0.0.0/4 and IPv6 ff00::/8. */
export function isMulticast(host: string): boolean {
  if (net.isIPv4(host)) return (Number(host.split('.')[0]) & 0xf0) === 0xe0;
  return net.isIPv6(host.split('%')[0]!) && /^ff[0-9a-f]{2}:/i.test(host);
}

/** "a.b.c.d:port", or "[ip6]:port" for IPv6 (readable, and unique per endpoint). */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** An entry as pvxs would print it: address, then ",TTL" and "@iface" of a multicast one. */
export function formatPvaAddress(a: PvaAddress): string {
  let s = hostPort(a.host, a.port);
  if (a.multicast && a.ttl !== undefined) s += `,${a.ttl}`;
  if (a.multicast && a.iface !== undefined) s += `@${a.iface}`;
  return s;
}

function portOf(text: string, entry: string, defaultPort: number): number | BadEntry {
  if (!/^\d{1,5}$/.test(text)) return { bad: `"${entry}": the port "${text}" is not a number` };
  const port = Number(text);
  if (port > 65535) return { bad: `"${entry}": the port ${port} is out of range` };
  return port === 0 ? defaultPort : port; // pvxs: port 0 means the default
}

/**
 * One entry, as pvxs reads it: `host`, `host:port`, `ip6`, `[ip6]`, `[ip6]:port`, each optionally
 * followed by `,TTL` and then `@iface`. `localhost` is 127.0.0.1. A host name (not an address)
 * stays as given, IPv4 (pvxs prefers IPv4 names). An IPv6 zone (`fe80::1%eth0`) is kept in the
 * host of a unicast address and becomes the interface of a multicast one.
 */
export function parsePvaAddress(entry: string, defaultPort: number): PvaAddress | BadEntry {
  const s = entry.trim();
  const at = s.indexOf('@');
  const comma = s.indexOf(',');
  if (comma >= 0 && at >= 0 && comma > at) return { bad: `"${entry}": the ",TTL" must come before "@interface"` };
  const addrEnd = comma >= 0 ? comma : at >= 0 ? at : s.length;
  const addr = s.slice(0, addrEnd);
  let ttl: number | undefined;
  let iface: string | undefined;
  if (comma >= 0) {
    const t = s.slice(comma + 1, at >= 0 ? at : s.length);
    if (!/^\d{1,3}$/.test(t) || Number(t) > 255) return { bad: `"${entry}": the TTL "${t}" is not a number from 0 to 255` };
    ttl = Number(t);
  }
  if (at >= 0) {
    iface = s.slice(at + 1);
    if (!iface || /[\s@,[\]]/.test(iface)) return { bad: `"${entry}": "${iface}" is not an interface name or address` };
  }
  let host: string;
  let port = defaultPort;
  const open = addr.indexOf('[');
  const close = addr.lastIndexOf(']');
  if (open < 0 !== close < 0) return { bad: `"${entry}": unmatched bracket` };
  if (open >= 0) {
    if (open !== 0 || close < open) return { bad: `"${entry}": an IPv6 address goes in brackets at the start: [addr]:port` };
    host = addr.slice(1, close);
    const rest = addr.slice(close + 1);
    if (rest) {
      if (!rest.startsWith(':')) return { bad: `"${entry}": expected ":port" after "]"` };
      const p = portOf(rest.slice(1), entry, defaultPort);
      if (typeof p !== 'number') return p;
      port = p;
    }
    if (!net.isIPv6(host.split('%')[0]!)) return { bad: `"${entry}": "${host}" is not an IPv6 address` };
  } else {
    const colons = addr.split(':').length - 1;
    if (colons > 1) {
      host = addr; // bare IPv6, no port
      if (!net.isIPv6(host.split('%')[0]!)) return { bad: `"${entry}": "${host}" is not an IPv6 address` };
    } else {
      host = colons === 1 ? addr.slice(0, addr.indexOf(':')) : addr;
      if (colons === 1) {
        const p = portOf(addr.slice(addr.indexOf(':') + 1), entry, defaultPort);
        if (typeof p !== 'number') return p;
        port = p;
      }
      if (!host) return { bad: `"${entry}": no host` };
      if (host === 'localhost') host = '127.0.0.1';
      if (!net.isIPv4(host) && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host))
        return { bad: `"${entry}": "${host}" is not an address or a host name` };
      if (!net.isIPv4(host) && /^[\d.]+$/.test(host)) return { bad: `"${entry}": "${host}" is not an IPv4 address` };
    }
  }
  const family: 4 | 6 = net.isIPv6(host.split('%')[0]!) ? 6 : 4;
  const multicast = isMulticast(host);
  if (family === 6 && host.includes('%') && multicast) {
    iface ??= host.slice(host.indexOf('%') + 1);
    host = host.slice(0, host.indexOf('%'));
  }
  const out: PvaAddress = { family, host, port, multicast };
  if (multicast && ttl !== undefined) out.ttl = ttl;
  if (multicast && iface !== undefined) out.iface = iface;
  return out;
}

/** Warnings already given (each is logged once per process: the variables are read again per Context). */
const warned = new Set<string>();

/** Log `msg` as a warning, the first time only. */
export function warnOnce(msg: string): void {
  if (warned.has(msg)) return;
  warned.add(msg);
  log.warn(msg);
}

/**
 * A list of entries (whitespace-separated, or given as an array): the bad ones are warned about
 * once, naming `what` (the variable or option), and skipped.
 */
export function parsePvaAddressList(list: string[] | string | undefined, defaultPort: number, what: string): PvaAddress[] {
  if (list === undefined) return [];
  const items = Array.isArray(list) ? list.flatMap((x) => x.split(/\s+/)) : list.split(/\s+/);
  const out: PvaAddress[] = [];
  for (const raw of items) {
    if (!raw.trim()) continue;
    const a = parsePvaAddress(raw, defaultPort);
    if (!isBadEntry(a)) {
      out.push(a);
      continue;
    }
    warnOnce(`${what}: ignoring ${a.bad}`);
  }
  return out;
}

/**
 * What Node's setMulticastInterface() takes for `iface` (a name or an address of an interface):
 * the interface's IPv4 address for IPv4, "::%name" for IPv6; undefined when no interface matches.
 */
export function multicastInterface(family: 4 | 6, iface: string, ifaces: Ifaces): string | undefined {
  const entries = Object.entries(ifaces);
  if (family === 4) {
    if (net.isIPv4(iface)) return iface;
    const list = ifaces[iface];
    return list?.find((a) => a.family === 'IPv4' || a.family === 4)?.address;
  }
  if (ifaces[iface]) return `::%${iface}`;
  const owner = entries.find(([, list]) => list?.some((a) => a.address === iface || a.address === iface.split('%')[0]));
  return owner ? `::%${owner[0]}` : undefined;
}
