// Hosts on a real network stack for the tests: one network namespace per host, each with an
// eth0 on one Linux bridge (in a namespace of its own), an address in 198.18.0.0/24 (and, when
// asked, one in 2001:2::/64) and a default route to a gateway that is not there, as on a real network; the bridge has no other
// port, so nothing sent can leave them. A rig is removed by close(), when the
// process exits, and (left behind by a killed run) by the next makeRig().
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';

export const SUBNET = '198.18.0';
export const BROADCAST = `${SUBNET}.255`;
const GATEWAY = `${SUBNET}.254`;
/** IPv6 addresses of the hosts (addIpv6), in 2001:2::/48. */
export const IPV6_PREFIX = '2001:2::';
const PREFIX = 'epxt-';

export interface Host {
  readonly ns: string;
  readonly address: string;
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
    let rig: Rig | undefined;
    try {
      removeStale();
      rig = new Rig(`${PREFIX}${process.pid}-${Math.random().toString(36).slice(2, 6)}`);
      rig.build(count);
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

  private build(count: number): void {
    const sw = this.addNs(`${this.tag}-sw`);
    ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', sw, 'link', 'set', 'br0', 'up');
    for (let i = 0; i < count; i++) {
      const ns = this.addNs(`${this.tag}-h${i + 1}`);
      const address = `${SUBNET}.${i + 1}`;
      ip('-n', sw, 'link', 'add', `p${i + 1}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      ip('-n', sw, 'link', 'set', `p${i + 1}`, 'master', 'br0', 'up');
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'brd', BROADCAST, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'route', 'add', 'default', 'via', GATEWAY);
      this.hosts.push({ ns, address });
    }
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

  /** `ip ARGS` on `host` (routes, addresses). */
  ip(host: Host, ...args: string[]): string {
    return ip('-n', host.ns, ...args);
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

  /** Kill what runs on the hosts and remove every namespace (and with them the links). */
  close(): void {
    process.off('exit', this.onExit);
    for (const c of this.children) c.kill('SIGKILL');
    this.children.clear();
    for (const ns of this.namespaces.splice(0).reverse()) {
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
  }
}
