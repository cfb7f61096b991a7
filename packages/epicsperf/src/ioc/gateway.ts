// p4p's PV Access gateway (pvagw, in the p4p wheel) in front of a PVA server on loopback: its
// client side searches the server's ports, its server side takes ports of its own; a PVA client
// given `env` reaches the server only through the gateway. Started as a site starts it, `pvagw
// <config>` (here `python -m p4p.gw`), with a JSON configuration of one client and one server.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killOnExit } from '../children.js';
import { IocError } from '../errors.js';
import { processMeter, type Meter } from '../procstat.js';
import { freePort } from './ports.js';
import { probe } from './probe.js';

export interface Gateway {
  /** The PVA variables a client needs to reach the gateway (loopback lists, its ports). */
  env: Record<string, string>;
  pid: number;
  /** Reads the gateway's process from outside. */
  meter: Meter;
  stop(): Promise<void>;
}

/**
 * Start pvagw in front of the PVA server that `upstream` (a client's EPICS_PVA_* on loopback)
 * reaches; resolves once `probeName` has been read through it.
 */
export async function startGateway(python: string, upstream: Readonly<Record<string, string>>, probeName: string): Promise<Gateway> {
  const taken = new Set([Number(upstream.EPICS_PVA_SERVER_PORT), Number(upstream.EPICS_PVA_BROADCAST_PORT)]);
  const serverPort = await freePort({ tcp: true, udp: false }, taken);
  taken.add(serverPort);
  const broadcastPort = await freePort({ tcp: false, udp: true }, taken);
  const config = {
    version: 2,
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
        interface: ['127.0.0.1'],
        addrlist: '127.0.0.1',
        autoaddrlist: false,
        serverport: serverPort,
        bcastport: broadcastPort,
      },
    ],
  };
  const dir = mkdtempSync(join(tmpdir(), 'epicsperf-pvagw-'));
  const file = join(dir, 'pvagw.conf');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(python, ['-m', 'p4p.gw', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  killOnExit(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const tail: string[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    tail.push(...chunk.split('\n').filter((l) => l.trim()));
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
  const env = {
    EPICS_PVA_ADDR_LIST: '127.0.0.1',
    EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    EPICS_PVA_SERVER_PORT: String(serverPort),
    EPICS_PVA_BROADCAST_PORT: String(broadcastPort),
  };
  try {
    await Promise.race([
      probe('PVA', env, probeName, 30_000),
      exited.then(() => {
        throw new IocError(`pvagw exited: ${tail.at(-1) ?? 'no message'}`);
      }),
    ]);
  } catch (err) {
    await stop();
    throw err;
  }
  return { env, pid: child.pid!, meter: processMeter(child.pid!), stop };
}
