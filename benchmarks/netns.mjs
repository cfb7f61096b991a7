// Namespace hosts for the benchmarks and the tests (packages/testkit/src/netns.ts builds on this): hosts on
// one bridge (198.18.0.0/24, a default route to a gateway that is not there, as on a real network),
// or on two bridges (198.18.0.0/24, 198.18.1.0/24) joined by a router that forwards unicast between
// them. Nothing is connected to the outside. Needs root. Namespaces are named PREFIX-PID-* (epxb for
// the benchmarks); those of a run that was killed are removed by the next one of that prefix.
import { execFileSync, spawn } from 'node:child_process';

const ip = (...args) => execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Kill what runs in namespace `ns`. */
function killIn(ns) {
  try {
    for (const pid of ip('netns', 'pids', ns).split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // exited meanwhile
      }
    }
  } catch {
    // gone already
  }
}

/** Remove the namespaces of `prefix` whose process is gone (killed before it could), and what still runs in them. */
export function removeStale(prefix) {
  for (const name of ip('netns', 'list')
    .split('\n')
    .map((l) => l.split(' ')[0])) {
    const m = new RegExp(`^${prefix}-(\\d+)-`).exec(name ?? '');
    if (!m) continue;
    try {
      process.kill(Number(m[1]), 0);
    } catch (err) {
      if (err.code !== 'ESRCH') continue;
      killIn(name);
      ip('netns', 'del', name);
    }
  }
}

/**
 * A process started on a host gets SIGKILL when the thread that started it ends (setpriv's
 * PR_SET_PDEATHSIG, kept across exec): a run killed before it could close its net leaves nothing
 * running. Without setpriv, close() and the next net's removeStale() are all there is.
 */
const PDEATHSIG = (() => {
  try {
    execFileSync('setpriv', ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' });
    return ['setpriv', '--pdeathsig', 'KILL', '--'];
  } catch {
    return [];
  }
})();

export class Net {
  hosts = [];
  /** On a routed net, the router (its address the one on the left subnet). */
  router;
  #namespaces = [];
  #children = new Set();
  #tag;

  /**
   * `count` hosts on one bridge, 198.18.0.1 up; or, routed, left hosts on 198.18.0.0/24 and right
   * ones on 198.18.1.0/24 (198.18.x.1 up, in that order in `hosts`), the router .254 on each.
   */
  constructor(shape, prefix = 'epxb') {
    this.#tag = `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 6)}`;
    try {
      removeStale(prefix);
      if (typeof shape === 'number') {
        const sw = this.#switch('sw');
        for (let i = 0; i < shape; i++) this.#host(sw, '198.18.0', i + 1);
      } else {
        const r = this.#ns(`${this.#tag}-r`);
        const sw = [this.#switch('sw0'), this.#switch('sw1')];
        this.#plug(sw[0], 'r', r, 'eth0', '198.18.0.254');
        this.#plug(sw[1], 'r', r, 'eth1', '198.18.1.254');
        execFileSync('ip', ['netns', 'exec', r, 'sysctl', '-qw', 'net.ipv4.ip_forward=1'], { stdio: ['ignore', 'pipe', 'pipe'] });
        this.router = { ns: r, address: '198.18.0.254', subnet: '198.18.0' };
        for (let i = 0; i < shape.left; i++) this.#host(sw[0], '198.18.0', i + 1, 'left');
        for (let i = 0; i < shape.right; i++) this.#host(sw[1], '198.18.1', i + 1, 'right');
      }
    } catch (err) {
      this.close();
      throw new Error(`network namespaces cannot be made: ${(err.stderr || err.message).trim().split('\n')[0]}`);
    }
  }

  #ns(name) {
    ip('netns', 'add', name);
    this.#namespaces.push(name);
    ip('-n', name, 'link', 'set', 'lo', 'up');
    return name;
  }

  #switch(name) {
    const sw = this.#ns(`${this.#tag}-${name}`);
    ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
    ip('-n', sw, 'link', 'set', 'br0', 'up');
    return sw;
  }

  #plug(sw, port, ns, dev, address) {
    const subnet = address.split('.').slice(0, 3).join('.');
    ip('-n', sw, 'link', 'add', port, 'type', 'veth', 'peer', 'name', dev, 'netns', ns);
    ip('-n', sw, 'link', 'set', port, 'master', 'br0', 'up');
    ip('-n', ns, 'addr', 'add', `${address}/24`, 'brd', `${subnet}.255`, 'dev', dev);
    ip('-n', ns, 'link', 'set', dev, 'up');
  }

  /** Host `i` of `subnet` (on a routed net, of `side`), its default route the subnet's .254. */
  #host(sw, subnet, i, side) {
    const ns = this.#ns(`${this.#tag}-h${this.hosts.length + 1}`);
    const address = `${subnet}.${i}`;
    this.#plug(sw, `p${i}`, ns, 'eth0', address);
    ip('-n', ns, 'route', 'add', 'default', 'via', `${subnet}.254`);
    this.hosts.push(side ? { ns, address, subnet, side } : { ns, address, subnet });
  }

  /** Start `cmd` on `host` with exactly `env`; killed by close(). */
  spawn(host, cmd, args, env, stdio = ['pipe', 'pipe', 'inherit']) {
    const child = spawn('ip', ['netns', 'exec', host.ns, ...PDEATHSIG, cmd, ...args], { env, stdio });
    this.#children.add(child);
    child.once('exit', () => this.#children.delete(child));
    return child;
  }

  /** Kill everything running on the hosts and remove the namespaces. */
  close() {
    for (const c of this.#children) c.kill('SIGKILL');
    this.#children.clear();
    for (const ns of this.#namespaces.splice(0).reverse()) {
      killIn(ns);
      try {
        ip('netns', 'del', ns);
      } catch {
        // gone already
      }
    }
  }
}

/** The process environment without EPICS_*: a host starts from the EPICS defaults. */
export function cleanEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('EPICS_')));
  return { ...env, ...extra };
}
