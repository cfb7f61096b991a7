// Channel Access client configuration from the EPICS_CA_* environment or explicit options, built
// on the address-list, broadcast and user-name helpers both protocols use (../config.ts).
import os from 'node:os';
import { DEFAULT_REPEATER_PORT, DEFAULT_SERVER_PORT } from '../../ca/constants.js';
import {
  isNo,
  num,
  parseAddrList,
  searchDestinations,
  userName,
  type ContextOptions,
  type Endpoint,
  type SearchDestination,
} from '../config.js';

/** The Channel Access configuration a context resolved from its options and the environment. */
export interface CaConfig {
  searchDestinations: SearchDestination[];
  /** Servers searched over TCP (EPICS_CA_NAME_SERVERS), without repeats. */
  nameServers: Endpoint[];
  serverPort: number;
  repeaterPort: number;
  beaconPeriodMs: number;
  connTimeoutMs: number;
  maxArrayBytes: number;
  maxSearchPeriodMs: number;
  clientName: string;
  hostName: string;
  searchWindow: number;
}

/** Build the configuration: explicit options, then the environment, then the CA defaults. */
export function resolveConfig(opts: ContextOptions = {}): CaConfig {
  const env = opts.env ?? process.env;
  const serverPort = opts.serverPort ?? num(env.EPICS_CA_SERVER_PORT, DEFAULT_SERVER_PORT);
  const repeaterPort = opts.repeaterPort ?? num(env.EPICS_CA_REPEATER_PORT, DEFAULT_REPEATER_PORT);
  const auto = opts.autoAddrList ?? !isNo(env.EPICS_CA_AUTO_ADDR_LIST);
  const maxSearch = Math.max(60, opts.maxSearchPeriod ?? num(env.EPICS_CA_MAX_SEARCH_PERIOD, 300));
  const user = userName();
  return {
    searchDestinations: searchDestinations(opts.addrList ?? env.EPICS_CA_ADDR_LIST, auto, serverPort),
    nameServers: uniqueEndpoints(parseAddrList(opts.caNameServers ?? env.EPICS_CA_NAME_SERVERS, serverPort)),
    serverPort,
    repeaterPort,
    beaconPeriodMs: 1000 * (opts.beaconPeriod ?? num(env.EPICS_CA_BEACON_PERIOD, 15)),
    connTimeoutMs: 1000 * (opts.connTimeout ?? num(env.EPICS_CA_CONN_TMO, 30)),
    maxArrayBytes: Math.max(16384, opts.maxArrayBytes ?? num(env.EPICS_CA_MAX_ARRAY_BYTES, 16384)),
    maxSearchPeriodMs: 1000 * maxSearch,
    clientName: opts.clientName ?? user,
    hostName: opts.hostName ?? os.hostname(),
    searchWindow: opts.searchWindow ?? 12,
  };
}

/** `list` without its repeated entries (libca connects once to a server listed twice). */
function uniqueEndpoints(list: Endpoint[]): Endpoint[] {
  const seen = new Set<string>();
  return list.filter((e) => {
    const key = `${e.host}:${e.port}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
