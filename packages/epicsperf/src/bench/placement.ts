// Where each client and the IOC run: `--hosts name=tcp://ADDR:PORT,...` names the agents,
// `--place client=host,ioc=host` puts things on them; what is not placed is spread: clients over
// the agents in turn, the IOC here (serving every interface, so the agents' runners find it by
// broadcast).
import { join } from 'node:path';
import { epicsperfHome } from '../home.js';
import { UsageError } from '../errors.js';
import { LOCAL, type Host } from '../hosts/host.js';
import { RemoteHost } from '../hosts/remote.js';
import { checkKeyName, ORCHESTRATOR_KEY, readKeyPair, readPublicKey } from '../hosts/wire.js';
import type { Ioc, IocOptions, IocServer } from '../ioc/index.js';
import type { HostRecord } from '../results/index.js';
import { LocalHost } from '../hosts/local-host.js';
import { listArg } from '../options.js';

export interface HostSpec {
  name: string;
  endpoint: string;
}

const ENDPOINT = /^tcp:\/\/([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/;

/** `a=tcp://198.18.0.2:5599,b=...`: each agent's name and endpoint. */
export function parseHosts(text: string): HostSpec[] {
  const specs: HostSpec[] = [];
  for (const part of listArg(text)) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new UsageError(`--hosts takes name=tcp://ADDR:PORT, got "${part}"`);
    const name = part.slice(0, eq);
    const endpoint = part.slice(eq + 1);
    if (name === LOCAL) throw new UsageError(`"${LOCAL}" is this host's name: give the agent another`);
    checkKeyName(name);
    const m = ENDPOINT.exec(endpoint);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`host ${name}: "${endpoint}" is not tcp://ADDR:PORT`);
    if (specs.some((s) => s.name === name)) throw new UsageError(`host ${name} is named twice in --hosts`);
    specs.push({ name, endpoint });
  }
  if (specs.length === 0) throw new UsageError('--hosts is empty');
  return specs;
}

/** `node=a,pyepics=b,ioc=c`: what goes where (checked against the hosts and clients). */
export function parsePlace(text: string | undefined, hosts: readonly string[], clients: readonly string[]): Map<string, string> {
  const place = new Map<string, string>();
  for (const part of listArg(text ?? '')) {
    const [what, where, extra] = part.split('=');
    if (!what || !where || extra !== undefined) throw new UsageError(`--place takes client=host or ioc=host, got "${part}"`);
    if (what !== 'ioc' && !clients.includes(what))
      throw new UsageError(`--place: ${what} is not a client of this run (${clients.join(', ')}) nor ioc`);
    if (where !== LOCAL && !hosts.includes(where))
      throw new UsageError(`--place: no host ${where} (hosts: ${[LOCAL, ...hosts].join(', ')})`);
    if (place.has(what)) throw new UsageError(`--place: ${what} is placed twice`);
    place.set(what, where);
  }
  return place;
}

/** The hosts of one run and what runs where. */
export class Placement {
  private constructor(
    readonly hosts: readonly Host[],
    private readonly clientHost: ReadonlyMap<string, Host>,
    readonly iocHost: Host,
    /** Whether anything runs elsewhere (then the IOC serves every interface). */
    readonly spread: boolean,
    /** The built-in IOC's server. */
    readonly server: IocServer,
  ) {}

  /** Everything here (no --hosts). */
  static local(python: string, server: IocServer = 'softioc'): Placement {
    const here = new LocalHost(python);
    return new Placement([here], new Map(), here, false, server);
  }

  /**
   * Connect to the agents of `--hosts` with this orchestrator's key (`<keys>/orchestrator.key`)
   * and each agent's public key (`<keys>/NAME.pub`), and place the clients.
   */
  static async connect(o: {
    hosts: string;
    place?: string | undefined;
    keys?: string | undefined;
    clients: readonly string[];
    python: string;
    server?: IocServer | undefined;
  }): Promise<Placement> {
    const specs = parseHosts(o.hosts);
    const place = parsePlace(
      o.place,
      specs.map((s) => s.name),
      o.clients,
    );
    const keys = o.keys ?? join(epicsperfHome(), 'keys');
    const own = readKeyPair(keys, ORCHESTRATOR_KEY);
    const agentKeys = specs.map((s) => readPublicKey(join(keys, `${s.name}.pub`), `no public key for host ${s.name}`));
    const here = new LocalHost(o.python);
    const settled = await Promise.allSettled(
      specs.map((s, i) => RemoteHost.connect({ name: s.name, endpoint: s.endpoint, agentKey: agentKeys[i]!, own })),
    );
    const remote = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) {
      await Promise.all(remote.map((h) => h.close()));
      throw failed.reason;
    }
    const byName = new Map<string, Host>([[LOCAL, here], ...remote.map((h) => [h.name, h] as const)]);
    const clientHost = new Map<string, Host>();
    let k = 0;
    for (const c of o.clients) {
      const where = place.get(c);
      clientHost.set(c, where ? byName.get(where)! : remote[k++ % remote.length]!);
    }
    const ioc = byName.get(place.get('ioc') ?? LOCAL)!;
    return new Placement([here, ...remote], clientHost, ioc, true, o.server ?? 'softioc');
  }

  /** Where a client runs. */
  hostOf(client: string): Host {
    return this.clientHost.get(client) ?? this.hosts[0]!;
  }

  /** The host's option for a workload: nothing when everything is here (rows then carry no host). */
  runOn(client: string): { host?: Host } {
    return this.spread ? { host: this.hostOf(client) } : {};
  }

  /**
   * Make the clients runnable on the other hosts they run on, and the IOC on its host (this
   * host's part is the command's, as without --hosts).
   */
  async prepare(clients: readonly string[], referee: boolean): Promise<void> {
    const by = new Map<Host, string[]>();
    if (this.iocHost instanceof RemoteHost) by.set(this.iocHost, []);
    for (const c of clients) {
      const h = this.hostOf(c);
      if (h instanceof RemoteHost) by.set(h, [...(by.get(h) ?? []), c]);
    }
    await Promise.all([...by].map(([h, cs]) => h.prepare(cs, referee)));
  }

  /** Start the IOC where it is placed; when anything runs elsewhere, it serves every interface. */
  startIoc(options: IocOptions): Promise<Ioc> {
    return this.iocHost.startIoc({ server: this.server, ...options, ...(this.spread && { listen: '0.0.0.0' }) });
  }

  /** Every host used, with its environment report, for the results. */
  async records(): Promise<HostRecord[] | undefined> {
    if (!this.spread) return undefined;
    const used = new Set<Host>([this.iocHost, ...this.clientHost.values()]);
    return Promise.all(
      this.hosts
        .filter((h) => used.has(h))
        .map(async (h) => ({
          name: h.name,
          address: h.address,
          ...(h instanceof RemoteHost && { machine: h.machine }),
          ...(await h.doctor().then(
            (environment) => ({ environment }),
            (err: Error) => ({ error: err.message }),
          )),
          runs: [...this.clientHost]
            .filter(([, x]) => x === h)
            .map(([c]) => c)
            .concat(h === this.iocHost ? ['ioc'] : []),
        })),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.hosts.map((h) => h.close()));
  }
}
