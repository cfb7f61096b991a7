// Free-port discovery for the built-in IOC on the loopback interface.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const HOST = '127.0.0.1';

export function isTcpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: HOST, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

export function isUdpPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createSocket({ type: 'udp4', reuseAddr: false });
    sock.once('error', () => {
      sock.close();
      resolve(false);
    });
    sock.bind({ port, address: HOST, exclusive: true }, () => sock.close(() => resolve(true)));
  });
}

/**
 * The ports the kernel hands out for outgoing connections and unbound sockets (Linux's
 * ip_local_port_range; 32768-60999 where it cannot be read). An IOC's ports are chosen below
 * them: a port of that range, free when an IOC stops, may be any client's the next moment, and an
 * IOC restarted on its ports (a reboot) could not bind it.
 */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo! > 0 && hi! >= lo!) return [lo!, hi!];
  } catch {
    // not Linux, or no /proc
  }
  return [32768, 60999];
}

/** A random port in up to 12,000 below the ephemeral range (above 1024), else above it; none when neither has 4,096. */
function candidatePort(): number | undefined {
  const [lo, hi] = ephemeralRange();
  const pick = (n: number) => Math.floor(Math.random() * Math.min(12_000, n));
  if (lo - 1025 >= 4096) return lo - 1 - pick(lo - 1025);
  if (65_535 - hi >= 4096) return hi + 1 + pick(65_535 - hi);
  return undefined;
}

/** A port the kernel picks (in the ephemeral range): the last resort. */
function ephemeralTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen({ port: 0, host: HOST, exclusive: true }, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A port that is free for TCP and, when asked, for UDP too (CA and PVA servers use both). */
export async function freePort(opts: { udp: boolean; tcp: boolean }, avoid: Set<number> = new Set()): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = candidatePort() ?? (await ephemeralTcpPort());
    if (avoid.has(port)) continue;
    if (opts.tcp && !(await isTcpPortFree(port))) continue;
    if (opts.udp && !(await isUdpPortFree(port))) continue;
    avoid.add(port);
    return port;
  }
  throw new Error('could not find a free port on 127.0.0.1');
}

/**
 * A free port (as freePort) whose neighbour `beside(port)` is free for UDP too, and kept from
 * `avoid`: a server port with its broadcast or repeater port next to it, as the EPICS defaults
 * are (5064 and 5065, 5075 and 5076). Falls back to a port without a free neighbour after many tries.
 */
export async function freePortWithNeighbour(
  opts: { udp: boolean; tcp: boolean },
  beside: (port: number) => number,
  avoid: Set<number> = new Set(),
): Promise<{ port: number; neighbour: number | undefined }> {
  for (let i = 0; i < 20; i++) {
    const port = await freePort(opts, avoid);
    const neighbour = beside(port);
    if (!avoid.has(neighbour) && (await isUdpPortFree(neighbour))) {
      avoid.add(neighbour);
      return { port, neighbour };
    }
  }
  return { port: await freePort(opts, avoid), neighbour: undefined };
}
