// Another host, through the `epicsperf agent` running there (src/agent): its runners and its IOC
// are started, relayed and measured there, and look to a workload like local ones. A host whose
// agent stops answering is lost: its runners and IOC end with "agent lost", the others go on.
import { Dealer } from 'zeromq';
import { getLogger } from '../log.js';
import { RunnerError, UsageError } from '../errors.js';
import { Runner, type RunnerCommand, type RunnerEvent, type RunnerExit } from '../launch/process.js';
import { counterNames, type Ioc, type IocOptions, type IocStats } from '../ioc/index.js';
import type { Meter, Reading } from '../procstat.js';
import type { EnvironmentReport } from '../results/index.js';
import type { Host, RunnerRequest } from './host.js';
import { decode, encode, HEARTBEAT_MS, LOST_AFTER_MS, Outbox, WIRE_VERSION, type KeyPair, type Message } from './wire.js';

const log = getLogger('hosts');

/** A meter fed by the agent's readings. */
class RemoteMeter implements Meter {
  last: Reading | undefined;
  read(): Reading | undefined {
    return this.last;
  }
}

/** A runner on the agent's host. */
class RemoteRunner extends Runner {
  readonly meter = new RemoteMeter();
  readonly exited: Promise<RunnerExit>;
  private resolveExit!: (e: RunnerExit) => void;

  constructor(
    private readonly host: RemoteHost,
    readonly rid: string,
    client?: string,
  ) {
    super(client);
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
  }

  /** A message about this runner from the agent. */
  receive(m: Message, payload: Buffer | undefined): void {
    if (m.r) this.meter.last = m.r as Reading;
    if (m.t === 'ev') {
      const event = m.event as RunnerEvent;
      if (payload) event.payload = payload;
      this.deliver(event);
    } else if (m.t === 'stderr') this.stderrLine(String(m.line ?? ''));
    else if (m.t === 'exit') this.close({ code: (m.code as number | null) ?? null, signal: (m.signal as NodeJS.Signals | null) ?? null });
  }

  /** The agent is gone: the runner counts as ended, and why is the row's error. */
  lost(why: string): void {
    this.fail(why);
    this.close({ code: null, signal: null });
  }

  private close(e: RunnerExit): void {
    this.end();
    this.resolveExit(e);
  }

  send(command: RunnerCommand): void {
    if (!this.ended) this.host.post({ t: 'send', rid: this.rid, cmd: command });
  }

  async finish(graceMs = 5000): Promise<void> {
    if (!this.ended) this.host.post({ t: 'finish', rid: this.rid, graceMs });
    await this.exited;
  }

  async kill(): Promise<void> {
    if (!this.ended) this.host.post({ t: 'kill', rid: this.rid });
    await this.exited;
  }
}

interface Pending {
  resolve(m: Message): void;
  reject(e: Error): void;
}

export interface RemoteHostOptions {
  name: string;
  /** The agent's endpoint, tcp://ADDR:PORT. */
  endpoint: string;
  /** The agent's public key, and the orchestrator's own pair. */
  agentKey: string;
  own: KeyPair;
  /** How long to wait for the agent's first answer (ms, default 10 s). */
  connectTimeoutMs?: number;
}

export class RemoteHost implements Host {
  readonly name: string;
  readonly address: string;
  /** The agent's own name for its machine, once it has answered. */
  machine = '';
  private readonly socket: Dealer;
  private readonly outbox: Outbox;
  private readonly pending = new Map<number, Pending>();
  private readonly runners = new Map<string, RemoteRunner>();
  private nextId = 1;
  private heard = Date.now();
  private heartbeat: NodeJS.Timeout | undefined;
  /** Why the host is lost (undefined while it answers). */
  lostWhy: string | undefined;
  private authFailed = false;

  private constructor(o: RemoteHostOptions) {
    this.name = o.name;
    this.address = o.endpoint;
    this.socket = new Dealer({
      curveServerKey: o.agentKey,
      curvePublicKey: o.own.publicKey,
      curveSecretKey: o.own.secretKey,
      linger: 0,
    });
    // A refused key is final: say so at once rather than when the answer's wait runs out.
    const refused = () => {
      this.authFailed = true;
      this.rejectPending(new RunnerError('the agent refused the handshake'));
    };
    this.socket.events.on('handshake:error:auth', refused);
    this.socket.events.on('handshake:error:protocol', refused);
    this.outbox = new Outbox(this.socket);
  }

  /** Connect to the agent and wait for its answer; a clear error when it does not come. */
  static async connect(o: RemoteHostOptions): Promise<RemoteHost> {
    const host = new RemoteHost(o);
    host.socket.connect(o.endpoint);
    void host.receiveLoop();
    const timeout = o.connectTimeoutMs ?? 10_000;
    try {
      const hello = await host.call({ t: 'hello', version: WIRE_VERSION }, timeout);
      host.machine = String(hello.machine ?? '');
    } catch (err) {
      host.shutdown();
      const why = host.authFailed
        ? 'it refused this orchestrator\'s key (the agent does not trust it: see docs/agents.md, "Keys")'
        : (err as Error).message;
      throw new UsageError(`agent ${o.name} at ${o.endpoint}: ${why}`);
    }
    host.heard = Date.now();
    host.heartbeat = setInterval(() => host.beat(), HEARTBEAT_MS);
    host.heartbeat.unref();
    return host;
  }

  private beat(): void {
    if (this.lostWhy) return;
    if (Date.now() - this.heard > LOST_AFTER_MS) {
      this.lose(`agent lost: no word from host ${this.name} (${this.address}) for ${Math.round(LOST_AFTER_MS / 1000)} s`);
      return;
    }
    this.post({ t: 'hb' });
  }

  private lose(why: string): void {
    if (this.lostWhy) return;
    this.lostWhy = why;
    log.warn({ host: this.name }, why);
    for (const r of this.runners.values()) r.lost(why);
    this.runners.clear();
    this.rejectPending(new RunnerError(why));
  }

  private async receiveLoop(): Promise<void> {
    try {
      for await (const frames of this.socket) {
        const d = decode(frames);
        if (!d) continue;
        this.heard = Date.now();
        this.dispatch(d.m, d.payload);
      }
    } catch {
      // The socket was closed.
    }
  }

  private dispatch(m: Message, payload: Buffer | undefined): void {
    if (m.id !== undefined && (m.t === 'done' || m.t === 'failed')) {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.t === 'done') p?.resolve(m);
      else p?.reject(new RunnerError(String(m.error ?? 'the agent could not do it')));
      return;
    }
    if (m.rid !== undefined) {
      const r = this.runners.get(m.rid);
      r?.receive(m, payload);
      if (m.t === 'exit') this.runners.delete(m.rid);
    }
  }

  /** Send a message without waiting for an answer. */
  post(m: Message): void {
    if (!this.lostWhy) this.outbox.send(encode(m));
  }

  /** Send a request and wait for its answer. */
  private call(m: Message, timeoutMs = 600_000): Promise<Message> {
    if (this.lostWhy) return Promise.reject(new RunnerError(this.lostWhy));
    const id = this.nextId++;
    return new Promise<Message>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RunnerError(`no answer to ${m.t} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.outbox.send(encode({ ...m, id }));
    });
  }

  async prepare(clients: readonly string[], referee: boolean): Promise<void> {
    await this.call({ t: 'prepare', clients, referee });
  }

  startRunner(r: RunnerRequest): Runner {
    const rid = `r${this.nextId++}`;
    const runner = new RemoteRunner(this, rid, r.client);
    if (this.lostWhy) runner.lost(this.lostWhy);
    else {
      this.runners.set(rid, runner);
      this.post({ t: 'runner', rid, client: r.client, task: r.task, args: r.args, names: r.names, env: r.env });
    }
    return runner;
  }

  async startIoc(options: IocOptions): Promise<Ioc> {
    const rid = `i${this.nextId++}`;
    // The runner here stands for the IOC's process: its readings, and its end.
    const proc = new RemoteRunner(this, rid);
    this.runners.set(rid, proc);
    let a: Message;
    try {
      a = await this.call({ t: 'ioc', rid, options: { ...options, listen: '0.0.0.0' } }, (options.startTimeout ?? 60_000) + 30_000);
    } catch (err) {
      this.runners.delete(rid);
      throw err;
    }
    const prefix = String(a.prefix);
    const nameStyle = a.nameStyle === 'padded' ? 'padded' : 'plain';
    const records = Number(a.records);
    const stats = async (reset: boolean) => (await this.call({ t: 'ioc-stats', rid, reset }, 10_000)).stats as IocStats;
    return {
      env: a.env as Record<string, string>,
      caPort: Number(a.caPort),
      pvaPort: Number(a.pvaPort),
      prefix,
      server: options.server ?? 'softioc',
      pid: Number(a.pid),
      meter: proc.meter,
      counterNames: () => counterNames(prefix, nameStyle, records),
      stats: () => stats(false),
      resetPuts: () => stats(true),
      exited: proc.exited.then((e) => e.code),
      stop: async () => {
        if (this.lostWhy) return;
        await this.call({ t: 'ioc-stop', rid }, 30_000).catch(() => undefined);
      },
    };
  }

  async doctor(): Promise<EnvironmentReport> {
    return (await this.call({ t: 'doctor' }, 120_000)).report as EnvironmentReport;
  }

  private shutdown(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.rejectPending(new RunnerError('the connection to the agent was closed'));
    this.socket.close();
  }

  private rejectPending(e: Error): void {
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }

  /** Say goodbye (the agent ends what it still runs for us) and close. */
  async close(): Promise<void> {
    if (!this.lostWhy && !this.socket.closed) {
      this.post({ t: 'bye' });
      await Promise.race([this.outbox.flushed(), new Promise((r) => setTimeout(r, 1000))]);
    }
    this.shutdown();
  }
}
