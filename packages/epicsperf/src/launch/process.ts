// One runner process seen from the orchestrator (a bench workload's or a capture's): spawn it, send
// commands on stdin, read its JSON-line events and binary payloads on fd 3 (docs/runners.md), and
// kill it on a deadline. `Runner` is what a workload sees: this process, or one an agent runs on
// another host (src/hosts/remote.ts), whose events arrive over the network.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { getLogger } from '../log.js';
import { killOnExit } from '../children.js';
import { schedulingPrefix } from './sched.js';
import { RunnerError } from '../errors.js';
import { processMeter, type Meter } from '../procstat.js';

const log = getLogger('runner');

export interface RunnerEvent {
  ev: string;
  [key: string]: unknown;
  payload?: Buffer;
}

export type RunnerCommand = 'start' | 'ship' | 'stop' | 'exit';
export interface RunnerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A runner's events as they arrive, and waiting for them: what every runner shares, wherever its
 * process runs. Subclasses deliver events (`deliver`), stderr lines (`stderrLine`) and the end
 * (`exited`), and carry the commands to the process.
 */
export abstract class Runner {
  /** `client`: the client it was started for, which its `ready` event must name (none for an IOC's process). */
  constructor(readonly client?: string) {}

  abstract readonly exited: Promise<RunnerExit>;
  /** Reads the process from outside, on the host it runs on. */
  abstract readonly meter: Meter;
  private readonly queue: RunnerEvent[] = [];
  private waiter: (() => void) | undefined;
  private readonly stderrTail: string[] = [];
  protected ended = false;
  /** Why the runner ended other than by its own exit (its host was lost), said as the row's error. */
  private failure: string | undefined;
  /** Sees every event first; an event it returns true for is not queued (for progress events). */
  intercept: ((event: RunnerEvent) => boolean) | undefined;
  /** Sees every line the runner writes on stderr (an agent relays them). */
  onStderr: ((line: string) => void) | undefined;

  abstract send(command: RunnerCommand): void;
  /** Ask the runner to exit; kill it if it has not after `graceMs`. */
  abstract finish(graceMs?: number): Promise<void>;
  abstract kill(): Promise<void>;

  protected deliver(event: RunnerEvent): void {
    const e = this.checked(event);
    if (!this.intercept?.(e)) this.queue.push(e);
    this.wake();
  }

  /** The event, or an error in its place: a `ready` that names another client than the one started. */
  private checked(event: RunnerEvent): RunnerEvent {
    if (event.ev !== 'ready' || this.client === undefined || event.client === this.client) return event;
    return { ev: 'error', message: `the runner started for ${this.client} said it is ${JSON.stringify(event.client ?? null)} when ready` };
  }

  protected stderrLine(line: string): void {
    if (!line.trim()) return;
    this.onStderr?.(line);
    this.stderrTail.push(line);
    if (this.stderrTail.length > 40) this.stderrTail.shift();
  }

  /** The runner is to end for a reason outside it (its host was lost): waiting fails with it. */
  protected fail(why: string): void {
    this.failure = why;
  }

  /** The process has ended: waiting stops. */
  protected end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** Why the runner failed, from its last error-looking stderr lines. */
  reason(): string {
    const tail = this.stderrTail;
    // The last error-looking line that is not a stack frame (Python `File "..."`, Node `at ...`).
    const err = [...tail]
      .reverse()
      .find((l) => /error|exception|traceback|not found|cannot|failed|killed|ignored|lost/i.test(l) && !/^\s*(File "|at )/.test(l));
    return (err ?? tail[tail.length - 1] ?? 'no output').trim().slice(0, 300);
  }

  /**
   * Wait for the event named `ev`. Rejects (after killing the runner) if the runner reports an
   * error, exits, or the deadline passes.
   */
  async next(ev: string, timeoutMs: number, phase = ev): Promise<RunnerEvent> {
    const e = await this.until(ev, timeoutMs, phase);
    if (e) return e;
    await this.kill();
    // Its last error-looking stderr line may say why (a library that only prints a warning).
    const said = this.stderrTail.length > 0 ? `; it said: ${this.reason()}` : '';
    throw new RunnerError(`the runner did not reach ${phase} within ${Math.round(timeoutMs / 1000)} s and was killed${said}`);
  }

  /**
   * As `next`, but the deadline passing resolves undefined and leaves the runner running (it can
   * still be asked to ship what it has).
   */
  async until(ev: string, timeoutMs: number, phase = ev): Promise<RunnerEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.queue.findIndex((e) => e.ev === ev || e.ev === 'error');
      if (i >= 0) {
        const e = this.queue.splice(i, 1)[0]!;
        if (e.ev === 'error') {
          await this.kill();
          throw new RunnerError(String(e.message ?? 'the runner reported an error'));
        }
        return e;
      }
      if (this.ended) {
        if (this.failure) throw new RunnerError(this.failure);
        const { code, signal } = await this.exited;
        throw new RunnerError(`the runner exited (${signal ?? `code ${code}`}) before ${phase}: ${this.reason()}`);
      }
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
}

/** A runner process on this host. */
export class RunnerProcess extends Runner {
  readonly pid: number;
  readonly exited: Promise<RunnerExit>;
  readonly meter: Meter;
  private readonly child: ChildProcess;

  constructor(command: string, args: string[], env: Record<string, string>, client?: string) {
    super(client);
    const sched = schedulingPrefix().argv;
    this.child = spawn(sched[0] ?? command, sched.length ? [...sched.slice(1), command, ...args] : args, {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    killOnExit(this.child);
    this.pid = this.child.pid ?? -1;
    this.meter = processMeter(this.pid);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    this.child.once('error', (err) => this.stderrLine(`cannot start ${command}: ${err.message}`));
    // stdin may break if the runner dies; that is reported through `exited`, not as an exception.
    this.child.stdin!.on('error', () => {});
    this.child.stdout!.on('data', (d: Buffer) => log.trace({ pid: this.pid }, d.toString().trimEnd()));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      for (const line of chunk.split('\n')) this.stderrLine(line);
    });
    this.readEvents(this.child.stdio[3] as Readable);
    void this.exited.then(() => this.end());
  }

  private readEvents(stream: Readable): void {
    let buf: Buffer = Buffer.alloc(0);
    let payload: { event: RunnerEvent; need: number; parts: Buffer[]; have: number } | undefined;
    stream.on('data', (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (payload) {
          const take = Math.min(payload.need - payload.have, buf.length);
          payload.parts.push(buf.subarray(0, take));
          payload.have += take;
          buf = buf.subarray(take);
          if (payload.have < payload.need) return;
          payload.event.payload = Buffer.concat(payload.parts);
          this.deliver(payload.event);
          payload = undefined;
          continue;
        }
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const line = buf.subarray(0, nl).toString('utf8');
        buf = buf.subarray(nl + 1);
        let event: RunnerEvent;
        try {
          event = JSON.parse(line) as RunnerEvent;
        } catch {
          event = { ev: 'error', message: `unreadable event from the runner: ${line.slice(0, 120)}` };
        }
        if (typeof event.bytes === 'number' && event.bytes > 0) {
          payload = { event, need: event.bytes, parts: [], have: 0 };
          continue;
        }
        this.deliver(event);
      }
    });
    stream.on('error', () => {});
  }

  send(command: RunnerCommand): void {
    this.say(command);
  }

  /** A command line of another protocol's (a server runner's `post ...`). */
  say(line: string): void {
    if (!this.ended) this.child.stdin!.write(line + '\n');
  }

  async finish(graceMs = 5000): Promise<void> {
    this.send('exit');
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(t);
  }

  async kill(): Promise<void> {
    if (!this.ended) this.child.kill('SIGKILL');
    await this.exited;
  }
}
