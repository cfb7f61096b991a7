// Hearing that a CA server has (re)appeared, so that names not yet found are searched for again at
// once instead of after their backoff: beacons through the host's repeater (started when none
// runs, as libca starts caRepeater).
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { fileURLToPath } from 'node:url';
import { BeaconAnomalies } from '../../ca/beacon.js';
import { Cmd, HEADER_SIZE } from '../../ca/constants.js';
import { encode } from '../../ca/messages.js';
import { intToIpv4 } from '../../ca/search.js';
import { getLogger } from '../../log.js';

const log = getLogger('beacons');

/** Registration with the repeater: retried this often until confirmed, then renewed this often. */
const REGISTER_RETRY_MS = 250;
const REGISTER_RENEW_MS = 30_000;
/** Servers not heard from for this long are forgotten. */
const SERVER_MAX_AGE_MS = 3_600_000;

// Three levels up from src/transport/ca and from dist/transport/ca alike.
const REPEATER_MAIN = fileURLToPath(new URL('../../../bin/ca-repeater.mjs', import.meta.url));

/** True when nothing holds `port` on this host (so no repeater runs there). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = dgram.createSocket({ type: 'udp4', reuseAddr: false });
    s.once('error', () => {
      s.close();
      resolve(false);
    });
    s.bind({ port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** CA beacons, as a libca client hears them: registered with the repeater of this host. */
export class CaBeacons {
  private readonly sock = dgram.createSocket('udp4');
  private readonly anomalies: BeaconAnomalies;
  private timer: NodeJS.Timeout | undefined;
  private confirmedAt = 0;
  private started = 0;
  private closed = false;

  constructor(
    private readonly repeaterPort: number,
    beaconPeriodMs: number,
    private readonly onAnomaly: (server: string) => void,
  ) {
    this.anomalies = new BeaconAnomalies(beaconPeriodMs);
    this.sock.on('error', (err) => log.debug({ err: err.message }, 'beacon socket error'));
    this.sock.on('message', (msg, from) => this.onMessage(msg, from.address));
    this.sock.bind(0, () => {
      this.sock.unref();
      this.register();
    });
  }

  private register(): void {
    if (this.closed) return;
    const now = Date.now();
    const confirmed = now - this.confirmedAt < REGISTER_RENEW_MS + 5000;
    this.sock.send(encode({ type: 'RepeaterRegisterRequest', address: 0x7f000001 }), this.repeaterPort, '127.0.0.1', () => {});
    // Not confirmed: start a repeater if none holds the port.
    if (!confirmed) void this.ensureRepeater();
    this.timer = setTimeout(() => this.register(), confirmed ? REGISTER_RENEW_MS : REGISTER_RETRY_MS);
    this.timer.unref();
  }

  /** Start a repeater if none holds the port (checked at most once a second). */
  private async ensureRepeater(): Promise<void> {
    const now = Date.now();
    if (now - this.started < 1000) return;
    this.started = now;
    if (!(await portFree(this.repeaterPort)) || this.closed) return;
    try {
      const child = spawn(process.execPath, [REPEATER_MAIN, String(this.repeaterPort)], { detached: true, stdio: 'ignore' });
      child.on('error', (err) =>
        log.warn({ err: err.message }, 'could not start the CA repeater: servers that come back are found by the search backoff alone'),
      );
      child.unref();
      log.debug({ port: this.repeaterPort, pid: child.pid }, 'started the CA repeater');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'could not start the CA repeater');
    }
  }

  private onMessage(msg: Buffer, from: string): void {
    for (let off = 0; off + HEADER_SIZE <= msg.length; off += HEADER_SIZE) {
      const cmd = msg.readUInt16BE(off);
      if (cmd === Cmd.REPEATER_CONFIRM) {
        this.confirmedAt = Date.now();
      } else if (cmd === Cmd.RSRV_IS_UP) {
        const addr = msg.readUInt32BE(off + 12);
        const server = `${addr ? intToIpv4(addr) : from}:${msg.readUInt16BE(off + 6)}`;
        const now = Date.now();
        if (this.anomalies.beacon(server, msg.readUInt32BE(off + 8), now)) this.onAnomaly(server);
        this.anomalies.prune(now, SERVER_MAX_AGE_MS);
      } else return; // only fixed-size messages come here
    }
  }

  /** True when beacons of `server` ("host:port", its TCP address) reach this client. */
  heard(server: string): boolean {
    return this.anomalies.has(server);
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    try {
      this.sock.close();
    } catch {
      // already closed
    }
  }
}
