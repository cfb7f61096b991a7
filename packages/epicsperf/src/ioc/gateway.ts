// A gateway in front of a server on loopback: its client side finds the server by an address list
// on the server's ports, its server side takes ports of its own, on loopback only (its searches
// answered and its beacons sent there); a client given `env` reaches the server only through the
// gateway. Each is started as a site starts it:
// - pvagw, p4p's PV Access gateway (in the p4p wheel): `pvagw <config>` (here `python -m p4p.gw`),
//   with a JSON configuration of one client and one server;
// - pva-gateway-rs, epics-rs's PV Access gateway (crates.io's epics-bridge-rs, installed on first
//   use): `pva-gateway-rs <config>`, the same configuration in pva2pva's schema (its flag mode
//   sends its beacons to every interface's broadcast address, which the configuration's server
//   section keeps to loopback);
// - ca-gateway-rs, epics-rs's port of EPICS ca-gateway (the same crate), with ca-gateway's own
//   flags: `-sip` (the interface it serves), `-cip` and `-cport` (the IOC it reaches), `-access`
//   (an access file that lets every client write); its defaults otherwise (a cache of each PV,
//   its statistics PVs, its report file in its folder).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from '../children.js';
import { IocError } from '../errors.js';
import { processMeter, type Meter } from '../procstat.js';
import { libraryVersion } from '../pyenv/index.js';
import { buildRustGateways, RUST_GATEWAYS, rustGatewayCommand, rustProfile } from '../toolchains/cargo.js';
import { freePort } from './ports.js';
import { probe } from './probe.js';

/** The gateways, each with the protocol it serves (each also a server row, servers/registry.ts). */
export const GATEWAYS: Readonly<Record<string, 'CA' | 'PVA'>> = { pvagw: 'PVA', 'pva-gateway-rs': 'PVA', 'ca-gateway-rs': 'CA' };

export const isGateway = (name: string): boolean => Object.hasOwn(GATEWAYS, name);

/** The protocol the gateway `name` serves. */
export const gatewayProtocol = (name: string): 'CA' | 'PVA' => GATEWAYS[name]!;

export interface Gateway {
  /** The variables a client of its protocol needs to reach the gateway (loopback lists, its ports). */
  env: Record<string, string>;
  /** Its server port (TCP). */
  port: number;
  pid: number;
  /** Its library's version (`p4p 4.3.0`'s `4.3.0`), with the build when it is not a release one. */
  version: string | undefined;
  /** Reads the gateway's process from outside. */
  meter: Meter;
  stop(): Promise<void>;
}

interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** The variables its clients need. */
  clientEnv: Record<string, string>;
  port: number;
  version: string | undefined;
}

/** A pva2pva configuration of one client (the server `upstream` reaches) and one server on loopback. */
function pvaConfig(upstream: Readonly<Record<string, string>>, serverPort: number, broadcastPort: number, version: 1 | 2) {
  return {
    version,
    readOnly: false,
    clients: [
      {
        name: 'upstream',
        provider: 'pva',
        addrlist: '127.0.0.1',
        autoaddrlist: false,
        serverport: Number(upstream.EPICS_PVA_SERVER_PORT),
        bcastport: Number(upstream.EPICS_PVA_BROADCAST_PORT),
      },
    ],
    servers: [
      {
        name: 'downstream',
        clients: ['upstream'],
        // p4p takes a list of interfaces, pva2pva (and epics-rs) one.
        interface: version === 2 ? ['127.0.0.1'] : '127.0.0.1',
        addrlist: '127.0.0.1',
        autoaddrlist: false,
        serverport: serverPort,
        bcastport: broadcastPort,
      },
    ],
  };
}

const rustVersion = (): string => `${RUST_GATEWAYS.version}${rustProfile() !== 'release' ? ` (${rustProfile()} build)` : ''}`;

async function installed(binary: string): Promise<string> {
  const built = await buildRustGateways();
  if ('error' in built) throw new IocError(`${binary}: ${built.error}`);
  return rustGatewayCommand(binary);
}

async function launch(name: string, python: string, upstream: Readonly<Record<string, string>>, dir: string): Promise<Launch> {
  if (name === 'ca-gateway-rs') {
    const port = await freePort({ tcp: true, udp: true }, new Set([Number(upstream.EPICS_CA_SERVER_PORT)]));
    // Writable, as pvagw's configuration is (readOnly false): without an access file ca-gateway
    // serves every PV read-only.
    const access = join(dir, 'gateway.access');
    writeFileSync(access, 'ASG(DEFAULT) {\n  RULE(1, WRITE)\n}\n');
    return {
      command: await installed(name),
      args: [
        '--sip',
        '127.0.0.1',
        '--cip',
        '127.0.0.1',
        '--cport',
        upstream.EPICS_CA_SERVER_PORT!,
        '--port',
        String(port),
        '--access',
        access,
      ],
      // Its beacons to loopback only, on its clients' repeater port (they are the IOC's).
      env: {
        EPICS_CAS_AUTO_BEACON_ADDR_LIST: 'NO',
        EPICS_CAS_BEACON_ADDR_LIST: '127.0.0.1',
        ...(upstream.EPICS_CA_REPEATER_PORT !== undefined && {
          EPICS_CA_REPEATER_PORT: upstream.EPICS_CA_REPEATER_PORT,
          EPICS_CAS_BEACON_PORT: upstream.EPICS_CA_REPEATER_PORT,
        }),
      },
      clientEnv: { EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: String(port) },
      port,
      version: rustVersion(),
    };
  }
  const taken = new Set([Number(upstream.EPICS_PVA_SERVER_PORT), Number(upstream.EPICS_PVA_BROADCAST_PORT)]);
  const port = await freePort({ tcp: true, udp: false }, taken);
  taken.add(port);
  const broadcastPort = await freePort({ tcp: false, udp: true }, taken);
  const file = join(dir, 'gateway.json');
  writeFileSync(file, JSON.stringify(pvaConfig(upstream, port, broadcastPort, name === 'pvagw' ? 2 : 1)));
  const clientEnv = {
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_SERVER_PORT: String(port),
    EPICS_PVA_BROADCAST_PORT: String(broadcastPort),
  };
  if (name !== 'pva-gateway-rs' && name !== 'pvagw') throw new IocError(`no gateway ${name}`);
  if (name === 'pvagw')
    return { command: python, args: ['-m', 'p4p.gw', file], clientEnv, port, version: await libraryVersion(python, 'p4p') };
  // Its upstream client searches where EPICS_PVA_ADDR_LIST and EPICS_PVA_BROADCAST_PORT say, not
  // where the configuration's client section does (epics-bridge-rs 0.33.0): given both, as a site
  // runs it with its network's variables.
  const searches = Object.fromEntries(
    ['EPICS_PVA_ADDR_LIST', 'EPICS_PVA_AUTO_ADDR_LIST', 'EPICS_PVA_SERVER_PORT', 'EPICS_PVA_BROADCAST_PORT'].map((k) => [
      k,
      upstream[k] ?? '',
    ]),
  );
  return { command: await installed(name), args: [file], env: searches, clientEnv, port, version: rustVersion() };
}

/**
 * Start the gateway `name` in front of the server that `upstream` (a client's EPICS_CA_* and
 * EPICS_PVA_* on loopback) reaches; resolves once `probeName` has been read through it.
 */
export async function startGateway(
  name: string,
  python: string,
  upstream: Readonly<Record<string, string>>,
  probeName: string,
): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), `epicsperf-${name}-`));
  let l: Launch;
  try {
    l = await launch(name, python, upstream, dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const child = spawn(l.command, l.args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...l.env } });
  killOnExit(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Its last lines, for why it exited (epics-rs's gateways log on stdout, pvagw on stderr).
  const tail: string[] = [];
  for (const stream of [child.stdout!, child.stderr!])
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      tail.push(...chunk.split('\n').filter((line) => line.trim()));
      tail.splice(0, Math.max(0, tail.length - 5));
    });
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([
      probe(gatewayProtocol(name), { ...upstream, ...l.clientEnv }, probeName, 30_000),
      exited.then(() => {
        throw new IocError(`${name} exited: ${tail.at(-1) ?? 'no message'}`);
      }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { env: l.clientEnv, port: l.port, pid: child.pid!, version: l.version, meter: processMeter(child.pid!), stop };
}
