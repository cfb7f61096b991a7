// core-pva's PV Access server (epicsperf's Java TlsServer, built with the Java runners) for the
// Secure PV Access tests, on free ports of this host, and core-pva's own client as the reference.
import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from 'epicsperf/dist/ioc/ports.js';
import { buildJavaRunners, javaRunnerCommand } from 'epicsperf/dist/toolchains/jvm.js';
import { KEYCHAIN_PASSWORD } from './keychains.js';

export interface TlsServer {
  /** The UDP port it takes searches on, the environment a client needs to reach it. */
  udpPort: number;
  clientEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** Build the Java runners (TlsServer among them) once: the reason when they cannot be. */
export async function javaReady(): Promise<string | undefined> {
  const r = await buildJavaRunners();
  return 'error' in r ? r.error : undefined;
}

/**
 * Start the server with keychain `keychain` (none: plain TCP only), EPICS_PVAS_TLS_OPTIONS
 * `options`, and `counters` PVs TLS:C1 to TLS:C<counters> counting at 10 Hz. It listens on every
 * interface (core-pva also joins its local multicast group there, where a client on the same UDP
 * port forwards unicast searches) and sends nothing but replies.
 */
export async function startTlsServer(keychain: string | undefined, options = '', counters = 0): Promise<TlsServer> {
  const avoid = new Set<number>();
  const udpPort = await freePort({ udp: true, tcp: false }, avoid);
  avoid.add(udpPort);
  const tcpPort = await freePort({ udp: false, tcp: true }, avoid);
  avoid.add(tcpPort);
  const tlsPort = await freePort({ udp: false, tcp: true }, avoid);
  const { command, args } = javaRunnerCommand('epicsperf.TlsServer');
  const child: ChildProcess = spawn(command, [...args, 'TLS:', String(counters)], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      EPICS_PVA_SERVER_PORT: String(tcpPort),
      EPICS_PVAS_TLS_PORT: String(tlsPort),
      EPICS_PVAS_BROADCAST_PORT: String(udpPort),
      // Defined even when empty: core-pva then does not look for a keychain in ~/.config/pva.
      EPICS_PVAS_TLS_KEYCHAIN: keychain ? `${keychain};${KEYCHAIN_PASSWORD}` : '',
      EPICS_PVAS_TLS_OPTIONS: options,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`TlsServer did not start within 30 s: ${err.slice(-300)}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/^ready \d+ \d+/m.test(out)) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`TlsServer exited ${code}: ${err.slice(-300)}`));
    });
  });
  return {
    udpPort,
    clientEnv: {
      EPICS_PVA_ADDR_LIST: `127.0.0.1:${udpPort}`,
      EPICS_PVA_AUTO_ADDR_LIST: 'NO',
      EPICS_PVA_BROADCAST_PORT: String(udpPort),
    },
    async stop() {
      child.stdin!.end();
      const t = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * core-pva's own client (PVAClientMain get, waiting up to `waitS`) with `keychain` ("" for none): its
 * output, and whether it read the PV. Asynchronous: a server in the calling process keeps serving.
 */
export function corePvaGet(
  server: Pick<TlsServer, 'clientEnv'>,
  keychain: string,
  pv: string,
  waitS: number,
): Promise<{ ok: boolean; output: string }> {
  const { command, args } = javaRunnerCommand('org.epics.pva.client.PVAClientMain');
  const child = spawn(command, [...args, 'get', '-w', String(waitS), pv], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...server.clientEnv, EPICS_PVA_TLS_KEYCHAIN: keychain },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('close', () => {
      clearTimeout(t);
      resolve({ ok: stdout.split('\n').some((l) => l.startsWith(`${pv} = `)), output: `${stdout}${stderr}` });
    }),
  );
}
