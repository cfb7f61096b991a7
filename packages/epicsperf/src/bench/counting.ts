// A server serving counters for the server workloads (headroom, load, the connect storm): a
// server runner's app ticking them (docs/runners.md "Server runners"), or the built-in IOC's
// records (`ioc`, direct; a gateway's row, behind it), with the counts and the ramp each offers.
import { counterNames, startIoc, type IocServer } from '../ioc/index.js';
import type { Meter } from '../procstat.js';
import { isGateway } from '../ioc/gateway.js';
import { libraryVersion } from '../pyenv/index.js';
import { findServer, startServer, type ServerProtocol, type ServerStats } from '../servers/index.js';
import { firstTick } from './headroom.js';

/** The built-in IOC as a server of these workloads: softioc's calc records, counted by EPICS base's
 *  own scan and served by RSRV and QSRV (the reference the other servers are set beside). */
export const IOC_SERVER = 'ioc';

/** The protocols a server of `--servers` serves. */
export const servedProtocols = (server: string): readonly ServerProtocol[] =>
  server === IOC_SERVER ? ['CA', 'PVA'] : (findServer(server)?.protocols ?? []);

/** A server serving counters: where its clients find it, its counters (and `prefix`RAMP) and its counts. */
export interface Counting {
  env: Readonly<Record<string, string>>;
  prefix: string;
  names: string[];
  meter: Meter;
  version?: string;
  stats(): Promise<ServerStats | undefined>;
  /** Sets `prefix`RAMP's rate (a server runner's command; the built-in IOC's is its RAMP:RATE PV). */
  setRamp?: (hz: number) => Promise<void>;
  stop(): Promise<void>;
}

const PREFIX = 'XP:';

/** Start `server` serving `records` counters that count at `rateHz` (0: still). */
export async function startCounting(server: string, python: string, records: number, rateHz: number): Promise<Counting> {
  // The built-in IOC's records, direct or behind the gateway (whose process is then the one measured).
  if (server === IOC_SERVER || isGateway(server)) {
    const ioc = await startIoc({
      records,
      rate: rateHz,
      arrayElements: 0,
      python,
      server: server === IOC_SERVER ? 'softioc' : (server as IocServer),
    });
    if (rateHz > 0) await firstTick(ioc);
    const version = server === IOC_SERVER ? await libraryVersion(python, 'softioc') : ioc.gatewayVersion;
    return {
      ...(version !== undefined && { version }),
      env: ioc.env,
      prefix: ioc.prefix,
      names: ioc.counterNames(),
      meter: ioc.meter,
      stats: () => ioc.stats().catch(() => undefined),
      stop: () => ioc.stop(),
    };
  }
  const s = await startServer(server, python, { prefix: PREFIX, int32: [], bytes: [], counters: records, counterRate: rateHz });
  return {
    env: s.clientEnv,
    prefix: PREFIX,
    names: counterNames(PREFIX, 'plain', records),
    setRamp: (hz) => s.setRamp(hz),
    meter: s.meter,
    ...(s.version !== undefined && { version: s.version }),
    stats: () => s.stats().catch(() => undefined),
    stop: () => s.stop(),
  };
}
