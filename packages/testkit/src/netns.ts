// Hosts on a real network stack for the tests, on the namespace hosts of benchmarks/netns.mjs:
// one network namespace per host, each with an eth0 on a Linux bridge (in a namespace of its own), an
// address in 198.18.0.0/24 (and, with addIpv6(), one in 2001:2::/64). Rig.make(): one bridge, and a
// default route to a gateway that is not there, as on a real network. Rig.routed(): two bridges
// (198.18.0.0/24 and 198.18.1.0/24) joined by a router namespace that forwards between them, so
// unicast crosses and broadcasts do not. No bridge has a port to the outside: nothing sent can leave
// them. A rig (its namespaces and what runs in them) is removed by close() and when the process
// exits; namespaces left behind by a killed run, by the next rig made.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cleanEnv, Net, removeStale, type NetHost } from '../../../benchmarks/netns.mjs';
import { BIN } from './cli.js';

export { cleanEnv, removeStale };
export const SUBNET = '198.18.0';
export const BROADCAST = `${SUBNET}.255`;
/** IPv6 addresses of the hosts (addIpv6), in 2001:2::/48. */
export const IPV6_PREFIX = '2001:2::';
/** The namespaces of the tests' rigs: epxt-PID-*. */
const PREFIX = 'epxt';

export type Host = NetHost;

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

export class Rig {
  private readonly onExit = (): void => this.close();

  private constructor(private readonly net: Net) {
    process.once('exit', this.onExit);
  }

  get hosts(): readonly Host[] {
    return this.net.hosts;
  }

  /** On a routed rig, the router (its address the one on the left subnet). */
  get router(): Host | undefined {
    return this.net.router;
  }

  /**
   * `count` hosts on one bridge, addresses 198.18.0.1 up; a string says why none could be made
   * (not root, no `ip`, no namespaces in this sandbox).
   */
  static make(count: number): Rig | string {
    return Rig.create(() => new Net(count, PREFIX));
  }

  /**
   * `left` hosts on 198.18.0.0/24 (198.18.0.1 up) and `right` hosts on 198.18.1.0/24 (198.18.1.1
   * up), in that order in `hosts`, each subnet a bridge of its own; a router (198.18.0.254 and
   * 198.18.1.254) forwards between them and is every host's default route. A string says why
   * none could be made.
   */
  static routed(counts: { left: number; right: number }): Rig | string {
    return Rig.create(() => new Net(counts, PREFIX));
  }

  private static create(make: () => Net): Rig | string {
    try {
      return new Rig(make());
    } catch (err) {
      return (err as Error).message;
    }
  }

  /**
   * The UDP datagrams `host` has sent since its namespace was made (IPv4 and IPv6; loopback
   * included): read before and after something to count what it sent.
   */
  udpSent(host: Host): number {
    const read = (file: string): string =>
      execFileSync('ip', ['netns', 'exec', host.ns, 'cat', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const v4 = read('/proc/net/snmp')
      .split('\n')
      .filter((l) => l.startsWith('Udp: '));
    const names = v4[0]?.split(/\s+/) ?? [];
    const values = v4[1]?.split(/\s+/) ?? [];
    const at = names.indexOf('OutDatagrams');
    if (at < 0 || values[at] === undefined) throw new Error(`no Udp OutDatagrams in ${host.ns}'s /proc/net/snmp`);
    let sent = Number(values[at]);
    const v6 = /^Udp6OutDatagrams\s+(\d+)$/m.exec(read('/proc/net/snmp6'));
    if (v6) sent += Number(v6[1]);
    return sent;
  }

  /**
   * Shape every host's link to `rate` (tc's units: 1gbit) with a token bucket filter, as a real
   * network of that speed: what the host sends waits for tokens, at most `latency` long.
   */
  shape(rate: string, latency = '50ms'): void {
    for (const h of this.hosts)
      execFileSync(
        'ip',
        ['netns', 'exec', h.ns, 'tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', rate, 'burst', '256kb', 'latency', latency],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
  }

  /** The shaping of `host`'s link, as `tc qdisc show` prints it. */
  qdisc(host: Host): string {
    return execFileSync('ip', ['netns', 'exec', host.ns, 'tc', 'qdisc', 'show', 'dev', 'eth0'], { encoding: 'utf8' });
  }

  /**
   * Give `host` the IPv6 address 2001:2::`n`/64 on eth0 (no duplicate address detection, so it
   * is usable at once); returns the address. Removed with the rig.
   */
  addIpv6(host: Host, n: number): string {
    const address = `${IPV6_PREFIX}${n.toString(16)}`;
    ip('-n', host.ns, 'addr', 'add', `${address}/64`, 'dev', 'eth0', 'nodad');
    return address;
  }

  /**
   * The built-in IOC on `host` (`epicsperf ioc --listen 0.0.0.0`, 5 counters at 10 Hz and
   * `extra` arguments) with `env`: resolves once it printed "ready", with what it printed.
   */
  async startIoc(
    host: Host,
    env: Record<string, string> = cleanEnv(),
    extra: string[] = [],
  ): Promise<{ child: ChildProcess; out: string }> {
    const args = [BIN, 'ioc', '--listen', '0.0.0.0', '--records', '5', '--rate', '10', '--array-elements', '0', ...extra];
    const child = this.spawn(host, process.execPath, args, env);
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (/^ready$/m.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the IOC exited (${code}) before it was ready: ${err.trim()}`)));
    });
    return { child, out };
  }

  /**
   * Kill an IOC of startIoc() and wait until nothing of it runs on `host` (its ports are free
   * again); a CA repeater it started, as on any host, outlives it.
   */
  async killIoc(host: Host, ioc: ChildProcess): Promise<void> {
    const running = (): string[] =>
      this.pids(host)
        .map((pid) => {
          try {
            return `${pid} ${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}`;
          } catch {
            return `${pid} gone`;
          }
        })
        .filter((p) => !/ (caRepeater|ca-repeater|gone)$/.test(p));
    ioc.kill('SIGKILL');
    const end = Date.now() + 20_000;
    while (running().length > 0) {
      if (Date.now() > end) throw new Error(`the IOC's processes still run 20 s after SIGKILL: ${running().join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** `ip ARGS` on `host` (routes, addresses). */
  ip(host: Host, ...args: string[]): string {
    return ip('-n', host.ns, ...args);
  }

  /** The ids of the processes running on `host` (in its namespace). */
  pids(host: Host): number[] {
    return ip('netns', 'pids', host.ns).split('\n').filter(Boolean).map(Number);
  }

  /** Start `cmd` on `host` with `env` (default: cleanEnv()); killed by close(). */
  spawn(host: Host, cmd: string, args: string[], env: Record<string, string> = cleanEnv()): ChildProcess {
    return this.net.spawn(host, cmd, args, env, ['pipe', 'pipe', 'pipe']);
  }

  /** Run `cmd` on `host` to its end (killed after `timeoutMs`). */
  run(host: Host, cmd: string, args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Finished> {
    const child = this.spawn(host, cmd, args, opts.env);
    child.stdin!.end();
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    return new Promise((resolve) => {
      child.once('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /**
   * Kill what runs on the hosts (what was started there and what that started in turn, a detached
   * caRepeater as well) and remove every namespace (and with them the links).
   */
  close(): void {
    process.off('exit', this.onExit);
    this.net.close();
  }
}
