// A connection that is not made in time (EPICS_CA_CONN_TMO / EPICS_PVA_CONN_TMO): a TLS server
// that accepts the TCP connection and never completes the handshake is given up as connect-failed
// (its channels then search again), and a connection once made is not given up by that limit.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type CloseReason, StreamConnection } from '../../src/transport/stream.js';

class Probe extends StreamConnection {
  ended_: { reason: CloseReason; detail: string } | undefined;
  private resolveDone: () => void = () => {};
  readonly done = new Promise<void>((r) => (this.resolveDone = r));
  protected directTarget(): undefined {
    return undefined;
  }
  protected commitDirect(): void {}
  protected received(): void {}
  protected take(): undefined {
    return undefined;
  }
  protected sendEcho(): void {}
  protected stopReading(): void {}
  protected ended(reason: CloseReason, detail: string): void {
    this.ended_ = { reason, detail };
    this.resolveDone();
  }
}

const servers: net.Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A TCP server on 127.0.0.1 that accepts and never writes: its port, and the sockets it accepted. */
async function silentServer(): Promise<{ port: number; accepted: net.Socket[] }> {
  const accepted: net.Socket[] = [];
  const s = net.createServer((sock) => {
    accepted.push(sock);
    sock.on('error', () => {});
    sock.resume(); // read (and drop) what comes, so that the client's close is seen
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  s.on('close', () => {
    for (const a of accepted) a.destroy();
  });
  return { port: (s.address() as net.AddressInfo).port, accepted };
}

describe('the connect limit', () => {
  it('a TLS handshake the server never answers is given up as connect-failed after the limit, the socket closed', async () => {
    const { port, accepted } = await silentServer();
    const t0 = performance.now();
    const c = new Probe('127.0.0.1', port, 300, 'echo', { rejectUnauthorized: false });
    await c.done;
    const took = performance.now() - t0;
    expect(c.ended_).toEqual({ reason: 'connect-failed', detail: 'no TLS handshake completed within 0.3 s' });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2000);
    expect(accepted).toHaveLength(1);
    await new Promise<void>((r) => (accepted[0]!.closed ? r() : accepted[0]!.once('close', () => r())));
  });

  it("a connection made is not given up by the limit (nothing read for longer is the echo watchdog's business)", async () => {
    const { port } = await silentServer();
    const c = new Probe('127.0.0.1', port, 300, 'echo');
    await new Promise((r) => setTimeout(r, 600));
    expect(c.connected).toBe(true);
    expect(c.ended_).toBeUndefined();
    c.close();
    expect(c.ended_?.reason).toBe('closed');
  });
});
