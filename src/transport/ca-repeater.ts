// The CA repeater, as caRepeater does it: one process per host owns the repeater port, takes
// the registration of every client of the host, and passes each beacon it receives on to all of
// them. Started by the first client that finds none running (beacons.ts); it leaves when no client
// has been registered for a minute, so it never outlives the clients of the host for long.
import dgram from 'node:dgram';
import { Cmd, HEADER_SIZE } from '../ca/constants.js';
import { encode } from '../ca/messages.js';
import { ipv4ToInt } from '../ca/search.js';

/** How often registered clients are checked, and how long the repeater stays with none. */
const CHECK_MS = 10_000;
const IDLE_EXIT_MS = 60_000;

interface Client {
  address: string;
  port: number;
}

/** A client's port is free again when it can be bound: the client is gone. */
function portFree(c: Client): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: false });
    s.once('error', () => {
      s.close();
      resolve(false);
    });
    s.bind({ port: c.port, address: c.address, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** Serve `port` until idle; resolves false at once when another repeater holds the port. */
export function runRepeater(port: number): Promise<boolean> {
  const clients = new Map<string, Client>();
  let idleSince = Date.now();
  const sock = dgram.createSocket({ type: 'udp4', reuseAddr: false });
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (served: boolean): void => {
      if (timer) clearInterval(timer);
      try {
        sock.close();
      } catch {
        // not bound
      }
      resolve(served);
    };
    sock.once('error', () => stop(false));
    sock.on('message', (msg, from) => {
      const isRegister = msg.length === 0 || (msg.length >= HEADER_SIZE && msg.readUInt16BE(0) === Cmd.REPEATER_REGISTER);
      if (isRegister) {
        if (!from.address.startsWith('127.')) return; // only this host's clients register
        const key = `${from.address}:${from.port}`;
        clients.set(key, { address: from.address, port: from.port });
        const confirm = encode({ type: 'RepeaterConfirmResponse', address: ipv4ToInt(from.address) ?? 0 });
        sock.send(confirm, from.port, from.address, () => {});
        return;
      }
      // A beacon without its server's address gets the address it came from.
      let out: Buffer = msg;
      if (msg.length >= HEADER_SIZE && msg.readUInt16BE(0) === Cmd.RSRV_IS_UP && msg.readUInt32BE(12) === 0) {
        out = Buffer.from(msg);
        out.writeUInt32BE(ipv4ToInt(from.address) ?? 0, 12);
      }
      for (const c of clients.values()) {
        if (c.port === from.port && c.address === from.address) continue;
        sock.send(out, c.port, c.address, () => {});
      }
    });
    sock.bind({ port, exclusive: true }, () => {
      timer = setInterval(() => {
        void (async () => {
          for (const [k, c] of clients) if (await portFree(c)) clients.delete(k);
          if (clients.size > 0) idleSince = Date.now();
          else if (Date.now() - idleSince >= IDLE_EXIT_MS) stop(true);
        })();
      }, CHECK_MS);
    });
  });
}
