// Hosts on a real network stack for the tests: one network namespace per host, each with an
// eth0 on a Linux bridge (in a namespace of its own), an address in 198.18.0.0/24 (and, with
// addIpv6(), one in 2001:2::/64). Rig.make():
// one bridge, and a default route to a gateway that is not there, as on a real network.
// Rig.routed(): two bridges (198.18.0.0/24 and 198.18.1.0/24) joined by a router namespace that
// forwards between them, so unicast crosses and broadcasts do not. No bridge has a port to the
// outside: nothing sent can leave them. A rig (its namespaces and what runs in them) is removed by
// close() and when the process exits; namespaces left behind by a killed run, by the next rig made.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BIN } from './cli.js';

export const SUBNET = '198.18.0';
export const BROADCAST = `${SUBNET}.255`;
const GATEWAY = `${SUBNET}.254`;
/** IPv6 addresses of the hosts (addIpv6), in 2001:2::/48. */
export const IPV6_PREFIX = '2001:2::';
const PREFIX = 'epxt-';
/** The subnets of a routed rig, left and right; the router is .254 on each. */
export const SUBNETS = { left: '198.18.0', right: '198.18.1' } as const;
export type Side = keyof typeof SUBNETS;

export interface Host {
  readonly ns: string;
  readonly address: string;
  /** The host's /24, as "198.18.1" (its broadcast address is that and ".255"). */
  readonly subnet: string;
  /** On a routed rig, the side of the router the host is on. */
  readonly side?: Side;
}

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

const ip = (...args: string[]): string => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Remove the namespaces of rigs whose process is gone. */
function removeStale(): void {
  for (const line of ip('netns', 'list').split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = /^epxt-(\d+)-/.exec(name);
    if (m && !alive(Number(m[1]))) ip('netns', 'del', name);
  }
}

/** The process environment without EPICS_*: a host starts from the EPICS defaults. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('EPICS_')) env[k] = v;
  return { ...env, ...extra };
}

export class Rig {
  readonly hosts: Host[] = [];
  /** On a routed rig, the router (its address the one on the left subnet). */
  router?: Host;
  private readonly namespaces: string[] = [];
  private readonly children = new Set<ChildProcess>();
  private readonly onExit = (): void => this.close();

  private constructor(private readonly tag: string) {
    process.once('exit', this.onExit);
  }

  /**
   * `count` hosts on one bridge, addresses 198.18.0.1 up; a string says why none could be made
   * (not root, no `ip`, no namespaces in this sandbox).
   */
  static make(count: number): Rig | string {
    return Rig.create((rig) => rig.build(count));
  }

  /**
   * `left` hosts on 198.18.0.0/24 (198.18.0.1 up) and `right` hosts on 198.18.1.0/24 (198.18.1.1
   * up), in that order in `hosts`, each subnet a bridge of its own; a router (198.18.0.254 and
   * 198.18.1.254) forwards between them and is every host's default route. A string says why
   * none could be made.
   */
  static routed(counts: { left: number; right: number }): Rig | string {
    return Rig.create((rig) => rig.buildRouted(counts));
  }

  private static create(build: (rig: Rig) => void): Rig | string {
    let rig: Rig | undefined;
    try {
      removeStale();
      rig = new Rig(`${PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 6)}`);
      build(rig);
      return rig;
    } catch (err) {
      rig?.close();
      const e = err as { stderr?: string; message: string };
      return `network namespaces cannot be made here: ${(e.stderr || e.message).trim().split('\n')[0]}`;
    }
  }

  private addNs(name: string): string {
    ip('netns', 'add', name);
    this.namespaces.push(name);
    ip('-n', name, 'link', 'set', 'lo', 'up');
    return name;
  }

  /** A bridge in a namespace of its own. */
  private addSwitch(name: string): string {
    const sw = this.addNs(`${this.tag}-${name}`);
    ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', sw, 'link', 'set', 'br0', 'up');
    return sw;
  }

  /** Plug `dev` of namespace `ns` into the bridge of `sw` (port `port`) with `address`/24. */
  private plug(sw: string, port: string, ns: string, dev: string, address: string): void {
    const subnet = address.split('.').slice(0, 3).join('.');
    ip('-n', sw, 'link', 'add', port, 'type', 'veth', 'peer', 'name', dev, 'netns', ns);
    ip('-n', sw, 'link', 'set', port, 'master', 'br0', 'up');
    ip('-n', ns, 'addr', 'add', `${address}/24`, 'brd', `${subnet}.255`, 'dev', dev);
    ip('-n', ns, 'link', 'set', dev, 'up');
  }

  private build(count: number): void {
    const sw = this.addSwitch('sw');
    for (let i = 0; i < count; i++) {
      const ns = this.addNs(`${this.tag}-h${i + 1}`);
      const address = `${SUBNET}.${i + 1}`;
      this.plug(sw, `p${i + 1}`, ns, 'eth0', address);
      ip('-n', ns, 'route', 'add', 'default', 'via', GATEWAY);
      this.hosts.push({ ns, address, subnet: SUBNET });
    }
  }

  private buildRouted(counts: { left: number; right: number }): void {
    const router = this.addNs(`${this.tag}-r`);
    const switches = { left: this.addSwitch('sw0'), right: this.addSwitch('sw1') };
    this.plug(switches.left, 'r', router, 'eth0', `${SUBNETS.left}.254`);
    this.plug(switches.right, 'r', router, 'eth1', `${SUBNETS.right}.254`);
    execFileSync('ip', ['netns', 'exec', router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.router = { ns: router, address: `${SUBNETS.left}.254`, subnet: SUBNETS.left };
    let n = 0;
    for (const side of ['left', 'right'] as const) {
      for (let i = 0; i < counts[side]; i++) {
        const ns = this.addNs(`${this.tag}-h${++n}`);
        const subnet = SUBNETS[side];
        const address = `${subnet}.${i + 1}`;
        this.plug(switches[side], `p${i + 1}`, ns, 'eth0', address);
        ip('-n', ns, 'route', 'add', 'default', 'via', `${subnet}.254`);
        this.hosts.push({ ns, address, subnet, side });
      }
    }
  }

  /**
   * The UDP datagrams `host` has sent since its namespace was made (IPv4 and IPv6; loopback
   * included): read before and after something to count what it sent.
   */
  udpSent(host: Host): number {
    const read = (file: string): string => execFileSync('ip', ['netns', 'exec', host.ns, 'cat', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const v4 = read('/proc/net/snmp').split('\n').filter((l) => l.startsWith('Udp: '));
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
    for (const h of this.hosts) execFileSync('ip', ['netns', 'exec', h.ns, 'tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', 'tbf', 'rate', rate, 'burst', '256kb', 'latency', latency], { stdio: ['ignore', 'pipe', 'pipe'] });
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
  async startIoc(host: Host, env: Record<string, string> = cleanEnv(), extra: string[] = []): Promise<{ child: ChildProcess; out: string }> {
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
      this.pids(host).map((pid) => {
        try {
          return `${pid} ${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()}`;
        } catch {
          return `${pid} gone`;
        }
      }).filter((p) => !/ (caRepeater|ca-repeater|gone)$/.test(p));
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
    const child = spawn('ip', ['netns', 'exec', host.ns, cmd, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
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
    for (const c of this.children) c.kill('SIGKILL');
    this.children.clear();
    for (const ns of this.namespaces.splice(0).reverse()) {
      try {
        for (const pid of ip('netns', 'pids', ns).split('\n').filter(Boolean)) {
          try {
            process.kill(Number(pid), 'SIGKILL');
          } catch {
            // gone meanwhile
          }
        }
      } catch {
        // no such namespace
      }
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
  }
}
