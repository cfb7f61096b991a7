// Free-port discovery for the built-in IOC on the loopback interface.
import { createSocket } from 'node:dgram';
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
    const port = await ephemeralTcpPort();
    if (avoid.has(port)) continue;
    if (opts.tcp && !(await isTcpPortFree(port))) continue;
    if (opts.udp && !(await isUdpPortFree(port))) continue;
    avoid.add(port);
    return port;
  }
  throw new Error('could not find a free port on 127.0.0.1');
}
