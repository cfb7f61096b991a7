// PV Access client configuration from the EPICS_PVA_* environment or explicit options, built on
// the address-list, broadcast and user-name helpers both protocols use (../config.ts).
import os from 'node:os';
import { DEFAULT_BROADCAST_PORT, DEFAULT_SERVER_PORT } from '../../pva/constants.js';
import { isNo, num, parseAddrList, searchDestinations, userName, type ContextOptions, type Endpoint, type SearchDestination } from '../config.js';

/** The PV Access configuration a context resolved from its options and the environment. */
export interface PvaConfig {
  /** UDP search destinations (EPICS_PVA_ADDR_LIST + broadcast addresses). */
  searchDestinations: SearchDestination[];
  /** Servers searched over TCP (EPICS_PVA_NAME_SERVERS). */
  nameServers: Endpoint[];
  broadcastPort: number;
  serverPort: number;
  connTimeoutMs: number;
  maxSearchPeriodMs: number;
  user: string;
  host: string;
}

/** Build the PVA configuration: explicit options, then the environment, then the defaults. */
export function resolvePvaConfig(opts: ContextOptions = {}): PvaConfig {
  const env = opts.env ?? process.env;
  const broadcastPort = opts.pvaBroadcastPort ?? num(env.EPICS_PVA_BROADCAST_PORT, DEFAULT_BROADCAST_PORT);
  const serverPort = num(env.EPICS_PVA_SERVER_PORT, DEFAULT_SERVER_PORT);
  const auto = opts.pvaAutoAddrList ?? !isNo(env.EPICS_PVA_AUTO_ADDR_LIST);
  return {
    searchDestinations: searchDestinations(opts.pvaAddrList ?? env.EPICS_PVA_ADDR_LIST, auto, broadcastPort),
    nameServers: parseAddrList(opts.pvaNameServers ?? env.EPICS_PVA_NAME_SERVERS, serverPort),
    broadcastPort,
    serverPort,
    connTimeoutMs: 1000 * (opts.pvaConnTimeout ?? num(env.EPICS_PVA_CONN_TMO, 30)),
    maxSearchPeriodMs: 1000 * Math.max(60, opts.maxSearchPeriod ?? num(env.EPICS_CA_MAX_SEARCH_PERIOD, 300)),
    user: opts.clientName ?? userName(),
    host: opts.hostName ?? os.hostname(),
  };
}
