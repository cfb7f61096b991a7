// `epicsperf agent`: serves this host to orchestrators over ZeroMQ (docs/agents.md). It starts
// the project's runners and the built-in IOC here when asked (a client and a task, never a
// command), relays what they say, and sends their readings taken here. Only orchestrators whose
// public keys it was given get an answer (CURVE, checked by a ZAP handler); one that stops
// sending heartbeats has everything it started here killed.
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reply, Router } from 'zeromq';
import { getLogger } from '../log.js';
import { LocalHost } from '../hosts/local-host.js';
import { findClient } from '../clients/index.js';
import type { Runner, RunnerExit } from '../launch/process.js';
import type { Ioc, IocOptions } from '../ioc/index.js';
import type { Meter } from '../procstat.js';
import {
  decode,
  encode,
  HEARTBEAT_MS,
  LOST_AFTER_MS,
  METER_MS,
  Outbox,
  refuseRequest,
  WIRE_VERSION,
  z85Decode,
  type KeyPair,
  type Message,
} from '../hosts/wire.js';

const log = getLogger('agent');

/** What an orchestrator may choose of the IOC an agent starts (checked by startIoc). */
const IOC_OPTIONS = [
  'records',
  'rate',
  'prefix',
  'nameStyle',
  'arrayElements',
  'arrayRate',
  'arrayType',
  'latencyElements',
  'settings',
  'startTimeout',
  'accessSecurity',
] as const;

export interface AgentOptions {
  /** tcp://ADDR:PORT */
  bind: string;
  own: KeyPair;
  /** Public keys (Z85) of the orchestrators it serves. */
  trusted: readonly string[];
  /** What it says of itself (default: the host name). */
  machine?: string;
}

/** What one orchestrator started here. */
class Session {
  heard = Date.now();
  readonly runners = new Map<string, Runner>();
  readonly iocs = new Map<string, Ioc>();
  constructor(
    readonly peer: Buffer,
    readonly label: string,
  ) {}
}

export class Agent {
  private readonly router: Router;
  private readonly zap: Reply;
  private readonly outbox: Outbox;
  private readonly sessions = new Map<string, Session>();
  private readonly host = new LocalHost();
  private readonly trusted: Set<string>;
  private timer: NodeJS.Timeout | undefined;
  private meterTimer: NodeJS.Timeout | undefined;
  /** Resolves when the agent has closed. */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;

  constructor(private readonly o: AgentOptions) {
    this.trusted = new Set(o.trusted.map((k) => z85Decode(k).toString('hex')));
    this.zap = new Reply();
    this.router = new Router({
      curveServer: true,
      curvePublicKey: o.own.publicKey,
      curveSecretKey: o.own.secretKey,
      linger: 0,
      zapDomain: 'epicsperf',
    });
    this.outbox = new Outbox(this.router);
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  /** Bind and serve; resolves once it listens. */
  async start(): Promise<void> {
    // The ZAP handler must be bound before the first handshake.
    await this.zap.bind('inproc://zeromq.zap.01');
    void this.authenticate();
    await this.router.bind(this.o.bind);
    void this.serve();
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.meterTimer = setInterval(() => this.sendReadings(), METER_MS);
    log.info({ bind: this.o.bind, trusted: this.trusted.size }, 'agent listening');
  }

  /** ZAP (RFC 27): a CURVE client whose key is trusted gets 200, any other 400. */
  private async authenticate(): Promise<void> {
    try {
      for await (const [version, requestId, , address, , mechanism, key] of this.zap) {
        const ok = mechanism?.toString() === 'CURVE' && key !== undefined && this.trusted.has(key.toString('hex'));
        if (!ok) log.warn({ address: address?.toString() }, 'refused a peer whose key is not trusted');
        await this.zap.send([version!, requestId!, ok ? '200' : '400', ok ? 'OK' : 'key not trusted', ok ? 'orchestrator' : '', '']);
      }
    } catch {
      // Closed.
    }
  }

  private async serve(): Promise<void> {
    try {
      for await (const [peer, ...frames] of this.router) {
        const d = decode(frames);
        if (!peer || !d) continue;
        this.handle(peer, d.m);
      }
    } catch {
      // Closed.
    }
  }

  private send(s: Session, m: Message, payload?: Uint8Array): void {
    this.outbox.send([s.peer, ...encode(m, payload)]);
  }

  private handle(peer: Buffer, m: Message): void {
    const key = peer.toString('hex');
    let s = this.sessions.get(key);
    if (m.t === 'hello') {
      if (m.version !== WIRE_VERSION) {
        this.outbox.send([
          peer,
          ...encode({
            t: 'failed',
            id: m.id,
            error: `this agent speaks version ${WIRE_VERSION} of the wire, the orchestrator ${String(m.version)}: run the same epicsperf on both`,
          }),
        ]);
        return;
      }
      s ??= new Session(peer, key.slice(0, 8));
      this.sessions.set(key, s);
      log.info({ session: s.label }, 'orchestrator connected');
      this.send(s, { t: 'done', id: m.id, machine: this.o.machine ?? hostname() });
      return;
    }
    if (!s) return;
    s.heard = Date.now();
    const reply = (work: Promise<Record<string, unknown>>): void => {
      work.then(
        (body) => this.send(s, { t: 'done', id: m.id, ...body }),
        (err: Error) => this.send(s, { t: 'failed', id: m.id, error: err.message }),
      );
    };
    switch (m.t) {
      case 'hb':
        return;
      case 'bye':
        void this.end(s, 'the orchestrator said goodbye');
        return;
      case 'prepare':
        reply(this.host.prepare((m.clients as string[]) ?? [], m.referee === true).then(() => ({})));
        return;
      case 'doctor':
        reply(this.host.doctor().then((report) => ({ report })));
        return;
      case 'runner':
        this.startRunner(s, m);
        return;
      case 'send':
        s.runners.get(String(m.rid))?.send(m.cmd as 'start');
        return;
      case 'finish':
        void s.runners.get(String(m.rid))?.finish(Number(m.graceMs) || 5000);
        return;
      case 'kill':
        void s.runners.get(String(m.rid))?.kill();
        return;
      case 'ioc':
        reply(this.startIoc(s, String(m.rid), m.options as IocOptions));
        return;
      case 'ioc-stats': {
        const ioc = s.iocs.get(String(m.rid));
        reply(ioc ? (m.reset ? ioc.resetPuts() : ioc.stats()).then((stats) => ({ stats })) : Promise.reject(new Error('no such IOC')));
        return;
      }
      case 'ioc-stop': {
        const ioc = s.iocs.get(String(m.rid));
        reply((ioc ? ioc.stop() : Promise.resolve()).then(() => ({})));
        return;
      }
      default:
        log.debug({ t: m.t }, 'unknown message');
    }
  }

  private startRunner(s: Session, m: Message): void {
    const rid = String(m.rid);
    const refused = findClient(String(m.client)) ? refuseRequest(m) : `no client ${String(m.client)} here`;
    const exit = (e: RunnerExit, meter?: Meter) =>
      this.send(s, { t: 'exit', rid, code: e.code, signal: e.signal, ...(meter && { r: meter.read() }) });
    if (refused) {
      this.send(s, { t: 'stderr', rid, line: `refused by the agent: ${refused}` });
      exit({ code: 2, signal: null });
      return;
    }
    let runner: Runner;
    // A capture writes its file into a folder of this run, removed when the runner ends.
    const folder = m.task === 'capture' ? mkdtempSync(join(tmpdir(), 'epicsperf-agent-capture-')) : undefined;
    const removeFolder = () => folder && rmSync(folder, { recursive: true, force: true });
    try {
      const args = m.args as string[];
      runner = this.host.startRunner({
        client: String(m.client),
        task: String(m.task),
        args: folder ? args.map((a, i) => (args[i - 1] === '--out' ? join(folder, a) : a)) : args,
        names: m.names as string[],
        env: m.env as Record<string, string>,
      });
    } catch (err) {
      removeFolder();
      this.send(s, { t: 'stderr', rid, line: `cannot start: ${(err as Error).message}` });
      exit({ code: 2, signal: null });
      return;
    }
    s.runners.set(rid, runner);
    // Each event carries a reading taken as it passes, so the orchestrator's CPU figures between
    // two events are exact.
    runner.intercept = (event) => {
      const { payload, ...rest } = event;
      this.send(s, { t: 'ev', rid, event: rest, r: runner.meter.read() }, payload);
      return true;
    };
    runner.onStderr = (line) => this.send(s, { t: 'stderr', rid, line });
    void runner.exited.then((e) => {
      removeFolder();
      s.runners.delete(rid);
      exit(e);
    });
  }

  private async startIoc(s: Session, rid: string, asked: IocOptions): Promise<Record<string, unknown>> {
    // The IOC's shape only: never an interpreter, ports or an address from the other end.
    const options: IocOptions = {};
    for (const k of IOC_OPTIONS) if (asked?.[k] !== undefined) Object.assign(options, { [k]: asked[k] });
    const ioc = await this.host.startIoc({ ...options, listen: '0.0.0.0' });
    s.iocs.set(rid, ioc);
    void ioc.exited.then((code) => {
      s.iocs.delete(rid);
      this.send(s, { t: 'exit', rid, code, signal: null });
    });
    return {
      env: ioc.env,
      caPort: ioc.caPort,
      pvaPort: ioc.pvaPort,
      prefix: ioc.prefix,
      pid: ioc.pid,
      records: options.records ?? ioc.counterNames().length,
      nameStyle: options.nameStyle ?? 'plain',
    };
  }

  private sendReadings(): void {
    for (const s of this.sessions.values()) {
      for (const [rid, r] of s.runners) this.send(s, { t: 'meter', rid, r: r.meter.read() });
      for (const [rid, ioc] of s.iocs) this.send(s, { t: 'meter', rid, r: ioc.meter.read() });
    }
  }

  private beat(): void {
    const now = Date.now();
    for (const s of this.sessions.values()) {
      if (now - s.heard > LOST_AFTER_MS) void this.end(s, `no heartbeat for ${Math.round(LOST_AFTER_MS / 1000)} s`);
      else this.send(s, { t: 'hb' });
    }
  }

  /** End a session: kill its runners, stop its IOCs. */
  private end(s: Session, why: string): Promise<unknown> {
    this.sessions.delete(s.peer.toString('hex'));
    log.info({ session: s.label, runners: s.runners.size, iocs: s.iocs.size }, `orchestrator gone (${why}): ending what it started`);
    return Promise.allSettled([...[...s.runners.values()].map((r) => r.kill()), ...[...s.iocs.values()].map((ioc) => ioc.stop())]);
  }

  /** Stop serving: end every session and close the sockets. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.meterTimer) clearInterval(this.meterTimer);
    await Promise.all([...this.sessions.values()].map((s) => this.end(s, 'the agent is stopping')));
    this.router.close();
    this.zap.close();
    this.resolveClosed();
  }
}
