#!/usr/bin/env node
// The CA repeater, as caRepeater does it: one process per host owns the repeater port, takes the
// registration of every client of the host, and passes each beacon it receives on to all of them.
// Started by the first client that finds none running (src/transport/ca/beacons.ts): `node
// ca-repeater.mjs PORT`. It leaves when no client has been registered for a minute, so it never
// outlives the clients of its host for long. Plain JavaScript with no import of the project, so
// that the same file serves the built library and its sources.
import dgram from 'node:dgram';
import { pathToFileURL } from 'node:url';

const HEADER_SIZE = 16;
const RSRV_IS_UP = 13;
const REPEATER_CONFIRM = 17;
const REPEATER_REGISTER = 24;
/** How often registered clients are checked, and how long the repeater stays with none. */
const CHECK_MS = 10_000;
const IDLE_EXIT_MS = 60_000;

const ipv4Int = (a) => a.split('.').reduce((n, b) => n * 256 + Number(b), 0) >>> 0;

/** A client's port is free again when it can be bound: the client is gone. */
function portFree(c) {
  return new Promise((resolve) => {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: false });
    s.once('error', () => {
      s.close();
      resolve(false);
    });
    s.bind({ port: c.port, address: c.address, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/**
 * Serve `port` until idle (resolves true), or resolve false at once when another repeater holds
 * the port.
 * @param {number} port
 * @returns {Promise<boolean>}
 */
export function runRepeater(port) {
  const clients = new Map();
  let idleSince = Date.now();
  const sock = dgram.createSocket({ type: 'udp4', reuseAddr: false });
  return new Promise((resolve) => {
    let timer;
    const stop = (served) => {
      clearInterval(timer);
      try {
        sock.close();
      } catch {
        // not bound
      }
      resolve(served);
    };
    sock.once('error', () => stop(false));
    sock.on('message', (msg, from) => {
      const cmd = msg.length >= HEADER_SIZE ? msg.readUInt16BE(0) : -1;
      if (msg.length === 0 || cmd === REPEATER_REGISTER) {
        if (!from.address.startsWith('127.')) return; // only this host's clients register
        clients.set(`${from.address}:${from.port}`, { address: from.address, port: from.port });
        const confirm = Buffer.alloc(HEADER_SIZE);
        confirm.writeUInt16BE(REPEATER_CONFIRM, 0);
        confirm.writeUInt32BE(ipv4Int(from.address), 12);
        sock.send(confirm, from.port, from.address, () => {});
        return;
      }
      // A beacon without its server's address gets the address it came from.
      let out = msg;
      if (cmd === RSRV_IS_UP && msg.readUInt32BE(12) === 0) {
        out = Buffer.from(msg);
        out.writeUInt32BE(ipv4Int(from.address), 12);
      }
      for (const c of clients.values()) {
        if (c.port !== from.port || c.address !== from.address) sock.send(out, c.port, c.address, () => {});
      }
    });
    sock.bind({ port, exclusive: true }, () => {
      timer = setInterval(async () => {
        for (const [k, c] of clients) if (await portFree(c)) clients.delete(k);
        if (clients.size > 0) idleSince = Date.now();
        else if (Date.now() - idleSince >= IDLE_EXIT_MS) stop(true);
      }, CHECK_MS);
    });
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.argv[2]);
  process.title = 'ca-repeater';
  if (Number.isInteger(port) && port > 0 && port < 65536) await runRepeater(port);
}
