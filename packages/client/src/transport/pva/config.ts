// PV Access client configuration from the EPICS_PVA_* environment or explicit options: address
// lists in pvxs's syntax (IPv4, IPv6, multicast; ../addresses.ts), interfaces, name servers, on the
// broadcast and user-name helpers both protocols use (../config.ts).
import { existsSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BROADCAST_PORT, DEFAULT_SERVER_PORT } from '../../pva/constants.js';
import { formatPvaAddress, parsePvaAddressList, warnOnce, type PvaAddress } from '../addresses.js';
import { broadcastAddresses, isNo, num, userName, type ContextOptions, type Ifaces, type SearchDestination } from '../config.js';

/** The PV Access configuration a context resolved from its options and the environment. */
export interface PvaConfig {
  /** UDP search destinations (EPICS_PVA_ADDR_LIST + broadcast addresses). */
  searchDestinations: SearchDestination[];
  /** Servers searched over TCP (EPICS_PVA_NAME_SERVERS); an IPv6 host without brackets. */
  nameServers: PvaAddress[];
  /** IPv6 in use (PVXS_ENABLE_IPV6, default true): with false, IPv6 entries are left out. */
  ipv6: boolean;
  /** Local interface addresses (EPICS_PVA_INTF_ADDR_LIST; default 0.0.0.0, and [::] with IPv6). */
  interfaces: PvaAddress[];
  broadcastPort: number;
  serverPort: number;
  connTimeoutMs: number;
  maxSearchPeriodMs: number;
  user: string;
  host: string;
  /** Secure PV Access, when a keychain is configured. */
  tls: PvaTlsConfig | undefined;
}

/** Secure PV Access settings; the keychain is read when the first PV Access connection needs it. */
export interface PvaTlsConfig {
  keychain: string;
  /** The password, or the file holding it (pvxs's EPICS_PVA_TLS_KEYCHAIN_PWD_FILE). */
  password: string | { file: string };
  /** Servers that answer with plain TCP are not used. */
  required: boolean;
}

/** The versions in the well-known keychain folder: core-pva's ("1.5"), then pvxs's TLS branch's. */
const KEYCHAIN_FOLDERS = ['1.5', '1.3'];

/**
 * The client keychain where pvxs and core-pva look when EPICS_PVA_TLS_KEYCHAIN is not defined:
 * `$XDG_CONFIG_HOME/pva/<version>/client.p12` (else `$HOME/.config/...`), if there is one.
 */
function wellKnownKeychain(env: Record<string, string | undefined>): string | undefined {
  const base = env.XDG_CONFIG_HOME?.trim() || (env.HOME?.trim() ? join(env.HOME.trim(), '.config') : undefined);
  if (!base) return undefined;
  return KEYCHAIN_FOLDERS.map((v) => join(base, 'pva', v, 'client.p12')).find((f) => existsSync(f));
}

/**
 * EPICS_PVA_TLS_KEYCHAIN ("path", or core-pva's "path;password") and the options that override it;
 * when neither names one, the well-known keychain if it exists. Defined and empty: no TLS.
 */
export function resolvePvaTls(opts: ContextOptions, env: Record<string, string | undefined>): PvaTlsConfig | undefined {
  const setting = opts.pvaTlsKeychain ?? env.EPICS_PVA_TLS_KEYCHAIN ?? wellKnownKeychain(env) ?? '';
  if (setting === false || setting.trim() === '') return undefined;
  const sep = setting.indexOf(';');
  const keychain = sep > 0 ? setting.slice(0, sep) : setting;
  const pwdFile = env.EPICS_PVA_TLS_KEYCHAIN_PWD_FILE;
  const password =
    opts.pvaTlsKeychainPassword ??
    (sep > 0 ? setting.slice(sep + 1) : pwdFile !== undefined && pwdFile.trim() !== '' ? { file: pwdFile } : '');
  return { keychain: keychain.trim(), password, required: opts.pvaTlsRequired ?? false };
}

const ANY4: PvaAddress = { family: 4, host: '0.0.0.0', port: 0, multicast: false };
const ANY6: PvaAddress = { family: 6, host: '::', port: 0, multicast: false };

/** PVXS_ENABLE_IPV6 as pvxs reads it: NO turns IPv6 off, YES (or unset) leaves it on. */
function ipv6Enabled(v: string | undefined): boolean {
  if (v === undefined || v.trim() === '') return true;
  if (/^no$/i.test(v.trim())) return false;
  if (!/^yes$/i.test(v.trim())) warnOnce(`PVXS_ENABLE_IPV6=${v}: not YES or NO, ignored`);
  return true;
}

/** `list` without IPv6 entries when IPv6 is off (saying which were left out). */
function withFamilies(list: PvaAddress[], ipv6: boolean, what: string): PvaAddress[] {
  if (ipv6) return list;
  const v6 = list.filter((a) => a.family === 6);
  if (v6.length) warnOnce(`${what}: IPv6 is off (PVXS_ENABLE_IPV6=NO): ignoring ${v6.map(formatPvaAddress).join(' ')}`);
  return list.filter((a) => a.family === 4);
}

/**
 * Search destinations: the address list, then with `auto` the broadcast addresses of the
 * interfaces (all of them for 0.0.0.0 or [::] in `interfaces`, else those of the interfaces
 * listed), or 127.0.0.1 on a host with no interface but loopback. An entry is broadcast when it
 * is one of those addresses or 255.255.255.255. Repeats (same address, port and interface) are
 * merged, keeping the longest TTL, as pvxs does.
 */
export function pvaSearchDestinations(
  list: readonly PvaAddress[],
  auto: boolean,
  port: number,
  interfaces: readonly PvaAddress[],
  ifaces: Ifaces = os.networkInterfaces() as Ifaces,
): SearchDestination[] {
  const bcasts = broadcastAddresses(ifaces);
  const dests: PvaAddress[] = [...list];
  if (auto) {
    const anyIface = interfaces.some((i) => !i.multicast && (i.host === '0.0.0.0' || i.host === '::'));
    const wanted = new Set(interfaces.map((i) => i.host));
    const own = anyIface
      ? bcasts
      : broadcastAddresses(Object.fromEntries(Object.entries(ifaces).map(([k, v]) => [k, v?.filter((a) => wanted.has(a.address))])));
    for (const host of own) dests.push({ family: 4, host, port, multicast: false });
    if (bcasts.length === 0) dests.push({ family: 4, host: '127.0.0.1', port, multicast: false });
  }
  const byKey = new Map<string, SearchDestination>();
  for (const d of dests) {
    const k = `${d.host}|${d.port}|${d.iface ?? ''}`;
    const seen = byKey.get(k);
    if (seen) {
      if (d.ttl !== undefined && (seen.ttl === undefined || d.ttl > seen.ttl)) seen.ttl = d.ttl;
      continue;
    }
    const out: SearchDestination = {
      host: d.host,
      port: d.port,
      broadcast: d.family === 4 && (d.host === '255.255.255.255' || bcasts.includes(d.host)),
      family: d.family,
      multicast: d.multicast,
    };
    if (d.ttl !== undefined) out.ttl = d.ttl;
    if (d.iface !== undefined) out.iface = d.iface;
    byKey.set(k, out);
  }
  return [...byKey.values()];
}

/** Build the PVA configuration: explicit options, then the environment, then the defaults. */
export function resolvePvaConfig(opts: ContextOptions = {}, ifaces?: Ifaces): PvaConfig {
  const env = opts.env ?? process.env;
  const broadcastPort = opts.pvaBroadcastPort ?? num(env.EPICS_PVA_BROADCAST_PORT, DEFAULT_BROADCAST_PORT);
  const serverPort = num(env.EPICS_PVA_SERVER_PORT, DEFAULT_SERVER_PORT);
  const auto = opts.pvaAutoAddrList ?? !isNo(env.EPICS_PVA_AUTO_ADDR_LIST);
  const ipv6 = opts.pvaEnableIpv6 ?? ipv6Enabled(env.PVXS_ENABLE_IPV6);
  const given = (opt: string[] | string | undefined, name: string, optName: string) => ({
    list: opt ?? env[name],
    what: opt !== undefined ? optName : name,
  });
  const addr = given(opts.pvaAddrList, 'EPICS_PVA_ADDR_LIST', 'pvaAddrList');
  const ns = given(opts.pvaNameServers, 'EPICS_PVA_NAME_SERVERS', 'pvaNameServers');
  const intf = given(opts.pvaInterfaces, 'EPICS_PVA_INTF_ADDR_LIST', 'pvaInterfaces');
  let interfaces = withFamilies(parsePvaAddressList(intf.list, 0, intf.what), ipv6, intf.what);
  if (interfaces.length === 0) interfaces = ipv6 ? [ANY4, ANY6] : [ANY4];
  const nameServers = withFamilies(parsePvaAddressList(ns.list, serverPort, ns.what), ipv6, ns.what).filter((a) => {
    if (a.multicast) warnOnce(`${ns.what}: ignoring "${formatPvaAddress(a)}": a name server is a host, not a multicast group`);
    return !a.multicast;
  });
  const list = withFamilies(parsePvaAddressList(addr.list, broadcastPort, addr.what), ipv6, addr.what);
  return {
    searchDestinations: pvaSearchDestinations(list, auto, broadcastPort, interfaces, ifaces),
    nameServers,
    ipv6,
    interfaces,
    broadcastPort,
    serverPort,
    connTimeoutMs: 1000 * (opts.pvaConnTimeout ?? num(env.EPICS_PVA_CONN_TMO, 30)),
    maxSearchPeriodMs: 1000 * Math.max(60, opts.maxSearchPeriod ?? num(env.EPICS_CA_MAX_SEARCH_PERIOD, 300)),
    user: opts.clientName ?? userName(),
    host: opts.hostName ?? os.hostname(),
    tls: resolvePvaTls(opts, env),
  };
}
