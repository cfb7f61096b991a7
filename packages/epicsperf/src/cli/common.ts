// What the measuring commands share: choosing the IOC (built-in or from the environment),
// resolving clients, a live progress line on stderr, and dying cleanly on Ctrl-C.
import { startIoc, type Ioc, type IocOptions, type IocServer } from '../ioc/index.js';
import { findClient, clientNames, type ClientSpec, type Task } from '../clients/index.js';
export { prepareClients } from '../clients/index.js';
import { exitOnSignals as exitOnSignalsAs } from 'epics-ops';
import { UsageError } from '../errors.js';
import { listArg, type IocMode } from '../options.js';
import { Placement } from '../bench/placement.js';

/** Ctrl-C or SIGTERM: exit now; the exit hooks kill the IOC and every runner. */
/** Ctrl-C or a TERM ends the command at once, saying so. */
export const exitOnSignals = (): void => exitOnSignalsAs('epicsperf');

export function parseClient(name: string, task: Task): ClientSpec {
  const spec = findClient(name);
  if (!spec) throw new UsageError(`unknown client "${name}": choose from ${clientNames().join(', ')}`);
  if (!spec.tasks.includes(task)) throw new UsageError(`client ${name} does not run the ${task} workload`);
  return spec;
}

export function parseClientList(list: string, task: Task | 'all'): ClientSpec[] {
  const names = listArg(list);
  if (names.length === 0) throw new UsageError('--clients is empty');
  const seen = new Set<string>();
  return names.map((n) => {
    if (seen.has(n)) throw new UsageError(`client ${n} is listed twice`);
    seen.add(n);
    const spec = findClient(n);
    if (!spec) throw new UsageError(`unknown client "${n}": choose from ${clientNames().join(', ')}`);
    if (task !== 'all' && !spec.tasks.includes(task)) throw new UsageError(`client ${n} does not run the ${task} workload`);
    return spec;
  });
}

export interface Target {
  env: Record<string, string>;
  ioc?: Ioc;
  stop(): Promise<void>;
}

/**
 * The IOC to measure against: the built-in one (started now, where `pl` places it) or the one the
 * EPICS_* environment names.
 */
export async function target(mode: IocMode, iocOptions: IocOptions, pl?: Placement): Promise<Target> {
  if (mode === 'builtin') {
    const ioc = await (pl ? pl.startIoc(iocOptions) : startIoc(iocOptions));
    return { env: { ...ioc.env }, ioc, stop: () => ioc.stop() };
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('EPICS_') && v !== undefined) env[k] = v;
  return { env, stop: async () => {} };
}

/** A live status line on stderr when it is a terminal (redrawn each second with the time spent
 *  in the current step); quiet otherwise. */
export class Progress {
  private readonly live = process.stderr.isTTY === true;
  private text = '';
  private since = 0;
  private timer: NodeJS.Timeout | undefined;

  update(text: string): void {
    if (!this.live || text === this.text) return;
    this.text = text;
    this.since = Date.now();
    this.draw();
    this.timer ??= setInterval(() => this.draw(), 1000).unref();
  }

  private draw(): void {
    const line = `${this.text} (${Math.round((Date.now() - this.since) / 1000)} s)`;
    process.stderr.write(`\r\x1b[2K${line.slice(0, (process.stderr.columns ?? 100) - 1)}`);
  }

  done(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.live && this.text) process.stderr.write('\r\x1b[2K');
    this.text = '';
  }
}

/** The options every command that can run elsewhere takes (options.ts: hostsOption, placeOption, keysOption). */
export interface HostOpts {
  /** The built-in IOC's server (serverOption). */
  server?: IocServer;
  hosts?: string;
  place?: string;
  keys?: string;
}

/**
 * Where the run's clients and IOC go: all here, or (with --hosts) on the agents, connected and
 * made ready for the clients they will run (`referee`: the snapshot's checks, by c-libca).
 */
export async function placement(o: HostOpts, clients: readonly ClientSpec[], python: string, referee = false): Promise<Placement> {
  if (o.hosts === undefined) {
    if (o.place !== undefined) throw new UsageError('--place needs --hosts');
    return Placement.local(python, o.server);
  }
  const pl = await Placement.connect({
    hosts: o.hosts,
    place: o.place,
    keys: o.keys,
    clients: clients.map((c) => c.name),
    python,
    server: o.server,
  });
  try {
    await pl.prepare(
      clients.map((c) => c.name),
      referee,
    );
  } catch (err) {
    await pl.close();
    throw err;
  }
  return pl;
}

/** `work`, closing the connections to the agents when it fails. */
export async function orClose<T>(pl: Placement, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    await pl.close();
    throw err;
  }
}
