// The built-in test IOC as a library: start EPICS base's own IOC (epicsperf_runners.ioc on softioc) on
// free loopback ports (or on the network, when asked), wait until a real client has read from it,
// and stop it; it dies with us.
import { spawn, type ChildProcess } from 'node:child_process';
import { isIPv4 } from 'node:net';
import { fileURLToPath } from 'node:url';
import { getLogger } from '../log.js';
import { killOnExit } from '../children.js';
import { ensurePythonEnv, pythonModule } from '../pyenv/index.js';
import { freePort, freePortWithNeighbour, isTcpPortFree, isUdpPortFree } from './ports.js';
import { probe } from './probe.js';
import { gatewayProtocol, isGateway, startGateway } from './gateway.js';
import { DEFAULTS } from '../defaults.js';
import { DEFAULT_REPEATER_PORT as CA_REPEATER_PORT, DEFAULT_SERVER_PORT as CA_PORT } from 'epics-client/ca';
import { DEFAULT_BROADCAST_PORT as PVA_BROADCAST_PORT, DEFAULT_SERVER_PORT as PVA_PORT } from 'epics-client/pva';
import { IocError } from '../errors.js';
import { processMeter, type Meter } from '../procstat.js';
import { ARRAY_TYPES, IOC_SERVERS, type ArrayType, type IocServer } from '../results/index.js';
import { StatsChannel, type IocStats } from './stats.js';

export { ARRAY_TYPES, IOC_SERVERS, type ArrayType, type IocServer } from '../results/index.js';
export type { IocStats } from './stats.js';

const log = getLogger('ioc');

export interface IocOptions {
  /** Number of counters PREFIX:CALC1..N (default 1000). */
  records?: number;
  /** Counter update rate in Hz (default 10; 0 = never). */
  rate?: number;
  /** Record name prefix (default "TEST:"). */
  prefix?: string;
  /** 'plain' = CALC1..CALCN; 'padded' = CALC00000.. as the EPICSPyClientPerformance IOC. */
  nameStyle?: 'plain' | 'padded';
  /** Elements of PREFIX:ARRAY (default 1,000,000; 0 = no array). */
  arrayElements?: number;
  /** Refresh rate of PREFIX:ARRAY in Hz (default 1; 0 = off; 'max' = as fast as the IOC can). */
  arrayRate?: number | 'max';
  /** Element type of PREFIX:ARRAY (default double); update k holds k wrapped to the type. */
  arrayType?: ArrayType;
  /** Elements of PREFIX:LATENCY:DOUBLE and PREFIX:LATENCY:CHAR, the latency workload's targets (default 0 = none). */
  latencyElements?: number;
  /**
   * Settings records PREFIX:SET:1..N (default 0 = none): by index i mod 5 an ao, a longout, an
   * mbbo, a stringout and a 16-double waveform, nothing scanning them (see docs/ioc.md).
   */
  settings?: number;
  /**
   * Explicit ports; when omitted, free ones on loopback, the EPICS defaults (5064, 5075, 5076)
   * when listening elsewhere. A given port that is busy is an error.
   */
  caPort?: number;
  pvaPort?: number;
  pvaBroadcastPort?: number;
  /**
   * Address the servers bind: 127.0.0.1 (default: this host only, address lists in `env`), an
   * interface's address or 0.0.0.0 (every interface: clients elsewhere find it by broadcast, and
   * `env` holds only the ports). Beacons then go to every interface's broadcast address.
   */
  listen?: string;
  /** Python interpreter (default: the managed environment, created if needed). */
  python?: string;
  /** Give up if the IOC is not serving after this long (ms, default 60 s). */
  startTimeout?: number;
  /**
   * Load an access security file: PREFIX:KIND:GATED is writable only while PREFIX:KIND:GATE is 1
   * (for tests of access-rights changes), PREFIX:KIND:LOCKED never (off by default).
   */
  accessSecurity?: boolean;
  /**
   * The server that serves the IOC's PVs: 'softioc' (default), EPICS base's RSRV and QSRV,
   * 'node', this project's server (epics-client/server) in a Node process of its own, serving the
   * same PVs with the same behaviour, or a gateway in front of softioc on loopback ('pvagw', p4p's
   * PV Access gateway; 'pva-gateway-rs' and 'ca-gateway-rs', epics-rs's): `env`'s variables of
   * the gateway's protocol reach the gateway, and `meter` reads the gateway's process.
   */
  server?: IocServer;
}

export interface Ioc {
  /** Environment variables a client needs to reach this IOC (EPICS_CA_*, EPICS_PVA_*). */
  readonly env: Readonly<Record<string, string>>;
  readonly caPort: number;
  readonly pvaPort: number;
  readonly prefix: string;
  /** The server it runs on. */
  readonly server: IocServer;
  /** Behind a gateway: the gateway's library version. */
  readonly gatewayVersion?: string;
  /** The IOC's process id on the host it runs on. */
  readonly pid: number;
  /** Reads the IOC's process from outside, on its host. */
  readonly meter: Meter;
  /** Names of the counters, in order. */
  counterNames(): string[];
  /** What the IOC counted on its side so far (array updates published, arrays put to it). */
  stats(): Promise<IocStats>;
  /** Zero the IOC's put counts (before an array-put run); resolves to the counts after. */
  resetPuts(): Promise<IocStats>;
  /** Resolves when the IOC process has exited (for whatever reason). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

export function counterName(prefix: string, style: 'plain' | 'padded', i: number): string {
  return style === 'padded' ? `${prefix}CALC${String(i).padStart(5, '0')}` : `${prefix}CALC${i}`;
}

export function counterNames(prefix: string, style: 'plain' | 'padded', records: number): string[] {
  const first = style === 'padded' ? 0 : 1;
  return Array.from({ length: records }, (_, k) => counterName(prefix, style, first + k));
}

/** Record types of the settings PREFIX:SET:i, by i mod 5. */
export const SETTING_KINDS = ['ao', 'longout', 'mbbo', 'stringout', 'waveform'] as const;
/** The state names of the mbbo settings. */
export const SETTING_STATES = ['Off', 'On', 'Standby', 'Fault'] as const;

/** Names of the settings PREFIX:SET:1..N. */
export function settingNames(prefix: string, settings: number): string[] {
  return Array.from({ length: settings }, (_, k) => `${prefix}SET:${k + 1}`);
}

/** The value PREFIX:SET:i holds at start (an mbbo's is its state index), as ioc.py sets it. */
export function settingValue(i: number): number | string | number[] {
  switch (SETTING_KINDS[i % 5]) {
    case 'ao':
      return 1 + i * 0.001;
    case 'longout':
      return i;
    case 'mbbo':
      return i % 4;
    case 'stringout':
      return `set ${i}`;
    default:
      return Array.from({ length: 16 }, (_, k) => i + k * 0.25);
  }
}

function validate(o: IocOptions): void {
  const int = (v: number | undefined, name: string, min: number) => {
    if (v !== undefined && (!Number.isInteger(v) || v < min)) throw new IocError(`${name} must be an integer >= ${min}, got ${v}`);
  };
  int(o.records, 'records', 1);
  int(o.arrayElements, 'arrayElements', 0);
  int(o.latencyElements, 'latencyElements', 0);
  int(o.settings, 'settings', 0);
  int(o.caPort, 'caPort', 1);
  int(o.pvaPort, 'pvaPort', 1);
  int(o.pvaBroadcastPort, 'pvaBroadcastPort', 1);
  if (o.listen !== undefined && !isIPv4(o.listen)) throw new IocError(`listen must be an IPv4 address, got "${o.listen}"`);
  if (o.rate !== undefined && !(Number.isFinite(o.rate) && o.rate >= 0)) throw new IocError(`rate must be a number >= 0, got ${o.rate}`);
  if (o.arrayRate !== undefined && o.arrayRate !== 'max' && !(Number.isFinite(o.arrayRate) && o.arrayRate >= 0))
    throw new IocError(`arrayRate must be a number >= 0 or 'max', got ${o.arrayRate}`);
  if (o.arrayType !== undefined && !ARRAY_TYPES.includes(o.arrayType))
    throw new IocError(`arrayType must be one of ${ARRAY_TYPES.join(', ')}, got ${String(o.arrayType)}`);
  if (o.server !== undefined && !IOC_SERVERS.includes(o.server))
    throw new IocError(`server must be one of ${IOC_SERVERS.join(', ')}, got ${String(o.server)}`);
  if (o.server !== undefined && isGateway(o.server) && o.listen !== undefined && !o.listen.startsWith('127.'))
    throw new IocError(`the ${o.server} server runs on loopback only (it cannot serve other hosts here)`);
  if (o.prefix !== undefined && !/^[A-Za-z0-9_:.-]*$/.test(o.prefix))
    throw new IocError(`prefix may hold letters, digits and _ : . - only, got "${o.prefix}"`);
}

/** Start the built-in IOC. Resolves once a real CA client has read a PV from it. */
export async function startIoc(options: IocOptions = {}): Promise<Ioc> {
  validate(options);
  const command = options.server === 'node' ? process.execPath : (options.python ?? (await ensurePythonEnv()));
  if (options.listen !== undefined && !options.listen.startsWith('127.')) {
    // Clients elsewhere look on the EPICS default ports unless told otherwise.
    options = {
      ...options,
      caPort: options.caPort ?? CA_PORT,
      pvaPort: options.pvaPort ?? PVA_PORT,
      pvaBroadcastPort: options.pvaBroadcastPort ?? PVA_BROADCAST_PORT,
    };
  }
  // RSRV binds the CA port for TCP and UDP; QSRV binds the PVA port for TCP only (its UDP is the
  // broadcast port), and a UDP socket there, such as another run's CA repeater, is no clash.
  for (const [port, name, udp] of [
    [options.caPort, 'CA', true],
    [options.pvaPort, 'PVA', false],
  ] as const) {
    if (port !== undefined && !((await isTcpPortFree(port)) && (!udp || (await isUdpPortFree(port)))))
      throw new IocError(`the ${name} port ${port} is busy: choose another or leave it out to pick a free one`);
  }
  // The PVA broadcast port is not checked: PVA servers and clients of a host share it.
  // A free port can be taken between our check and the IOC's bind; retry with new ones.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(command, options);
    } catch (err) {
      const retry = err instanceof PortRaceError && options.caPort === undefined && options.pvaPort === undefined;
      if (!retry || attempt >= 3) throw err instanceof PortRaceError ? new IocError(err.message) : err;
      log.warn({ attempt }, 'IOC port was taken while starting; retrying with other ports');
    }
  }
}

class PortRaceError extends Error {}

/** The Node server's program, built (from src/ as from dist/, the build's). */
const NODE_SERVER = fileURLToPath(
  new URL(import.meta.url.includes('/dist/') ? './node-server.js' : '../../dist/ioc/node-server.js', import.meta.url),
);

/** The port after `p` (before it at the top of the range). */
const beside = (p: number): number => (p < 65535 ? p + 1 : p - 1);

async function launch(command: string, o: IocOptions): Promise<Ioc> {
  const prefix = o.prefix ?? DEFAULTS.prefix;
  const records = o.records ?? DEFAULTS.records;
  const nameStyle = o.nameStyle ?? DEFAULTS.nameStyle;
  const given = [o.caPort, o.pvaPort, o.pvaBroadcastPort].filter((p): p is number => p !== undefined);
  const taken = new Set<number>([...given, ...given.map(beside)]);
  // The broadcast and repeater ports sit beside the server ports (as 5076 beside 5075 and 5065
  // beside 5064), given or picked: an IOC started again with the server ports it was given or
  // picked serves the same environment, and its clients find it on the ports they know.
  const ca =
    o.caPort !== undefined
      ? { port: o.caPort, neighbour: beside(o.caPort) }
      : await freePortWithNeighbour({ tcp: true, udp: true }, beside, taken);
  const pva =
    o.pvaPort !== undefined
      ? { port: o.pvaPort, neighbour: beside(o.pvaPort) }
      : await freePortWithNeighbour({ tcp: true, udp: false }, beside, taken);
  const caPort = ca.port;
  const pvaPort = pva.port;
  const listen = o.listen ?? '127.0.0.1';
  const pvaBroadcastPort = o.pvaBroadcastPort ?? pva.neighbour ?? (await freePort({ tcp: false, udp: true }, taken));
  const repeaterPort = !listen.startsWith('127.') ? CA_REPEATER_PORT : (ca.neighbour ?? (await freePort({ tcp: false, udp: true }, taken)));
  const server = o.server ?? 'softioc';
  const module = server === 'node' ? { args: [NODE_SERVER], env: {} } : pythonModule('ioc');
  const args = [
    ...(server === 'node' ? [] : ['-u']),
    ...module.args,
    '--watch-stdin',
    '--records',
    String(records),
    '--rate',
    String(o.rate ?? DEFAULTS.rate),
    '--prefix',
    prefix,
    '--name-style',
    nameStyle,
    '--array-elements',
    String(o.arrayElements ?? DEFAULTS.iocArrayElements),
    '--array-rate',
    String(o.arrayRate ?? DEFAULTS.iocArrayRate),
    '--array-type',
    o.arrayType ?? 'double',
    '--latency-elements',
    String(o.latencyElements ?? 0),
    '--settings',
    String(o.settings ?? 0),
    '--ca-port',
    String(caPort),
    '--pva-port',
    String(pvaPort),
    '--pva-broadcast-port',
    String(pvaBroadcastPort),
    '--repeater-port',
    String(repeaterPort),
    '--listen',
    listen,
    ...(o.accessSecurity ? ['--access-security'] : []),
  ];
  log.debug({ command, args }, 'starting IOC');
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...module.env } });
  // A parent killed outright is covered in the IOC itself (PR_SET_PDEATHSIG and stdin EOF).
  killOnExit(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const stderrTail: string[] = [];
  let portClash = false;
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (!line.trim()) continue;
      if (/Configured TCP port was unavailable|Address already in use/i.test(line)) portClash = true;
      stderrTail.push(line);
      if (stderrTail.length > 30) stderrTail.shift();
      log.trace({ ioc: child.pid }, line);
    }
  });

  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  try {
    const env = await readReady(child, exited, o.startTimeout ?? 60_000, stderrTail);
    if (portClash) throw new PortRaceError(`the IOC could not bind port ${caPort}`);
    // Probed on the address it serves (loopback for every interface), whatever `env` holds.
    const probeHost = listen === '0.0.0.0' ? '127.0.0.1' : listen;
    await probe(
      'CA',
      { ...env, EPICS_CA_ADDR_LIST: probeHost, EPICS_CA_AUTO_ADDR_LIST: 'NO' },
      `${prefix}KIND:LONG`,
      o.startTimeout ?? 60_000,
    );
    if (portClash) throw new PortRaceError(`the IOC could not bind port ${caPort}`);
    log.info({ caPort, pvaPort, pid: child.pid }, 'IOC ready');
    const stats = new StatsChannel(child);
    // Behind a gateway: its ports (of its protocol) and its process are the server the clients see.
    const gateway = isGateway(server) ? await startGateway(server, command, env, `${prefix}KIND:LONG`) : undefined;
    const through = gateway && gatewayProtocol(server);
    return {
      stats: () => stats.ask(),
      resetPuts: () => stats.ask(5000, 'reset-puts'),
      env: { ...env, ...gateway?.env },
      caPort: through === 'CA' ? gateway!.port : caPort,
      pvaPort: through === 'PVA' ? gateway!.port : pvaPort,
      prefix,
      server,
      ...(gateway?.version !== undefined && { gatewayVersion: gateway.version }),
      pid: gateway?.pid ?? child.pid!,
      meter: gateway?.meter ?? processMeter(child.pid!),
      exited,
      counterNames: () => counterNames(prefix, nameStyle, records),
      stop: async () => {
        await gateway?.stop();
        await stop();
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function readReady(
  child: ChildProcess,
  exited: Promise<number | null>,
  timeoutMs: number,
  stderrTail: string[],
): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {};
    let buf = '';
    const timer = setTimeout(
      () => reject(new IocError(`the IOC did not start within ${timeoutMs} ms: ${lastError(stderrTail)}`)),
      timeoutMs,
    );
    const onData = (chunk: string) => {
      buf += chunk;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        const eq = line.indexOf('=');
        if (line === 'ready') {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          child.stdout!.resume();
          resolve(env);
          return;
        }
        if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
      }
    };
    child.stdout!.setEncoding('utf8').on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new IocError(`the IOC exited (code ${code}) before it was ready: ${lastError(stderrTail)}`));
    });
  });
}

function lastError(tail: string[]): string {
  const interesting = tail.filter((l) => /error|exception|cannot|can't|failed/i.test(l));
  return (interesting.pop() ?? tail[tail.length - 1] ?? 'no output').trim();
}
