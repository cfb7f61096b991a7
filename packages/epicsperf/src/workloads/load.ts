// The load workload: N runners per host of each client at rising steps, against one IOC, until a
// step is lost, grows latency or fails; its figure is the clients served (bench/load.ts).
import { InvalidArgumentError, Option } from 'commander';
import { intArg, listArg } from '../options.js';
import { LOCAL } from '../hosts/host.js';
import { LOAD_SECONDS, LOAD_STEPS, loadWorkload, runLoad } from '../bench/load.js';
import { loadOutcome } from '../report/outcomes.js';
import { stat } from '../results/index.js';
import type { ClientFigure } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { loadChart, loadDetails, loadLimitNote, loadTable, loadText, loadTitle } from '../report/load.js';
import { MONITOR_DEFAULTS, RATE_OPTION, RECORDS_OPTION } from './monitor.js';
import { type BenchWorkload, type SuiteContext, serving, value } from './workload.js';
import { referenceClients, referenceFor, serversOption } from './servers.js';
import { servedProtocols, startCounting } from '../bench/counting.js';
import type { ClientSpec } from '../clients/index.js';
import { UsageError } from '../errors.js';
import { stealMeter } from '../procstat.js';
import type { ServerProtocol } from '../servers/index.js';
import type { LoadResults, LoadWorkload } from '../results/index.js';

export const load: BenchWorkload = {
  name: 'load',
  serves: 'monitor',
  ramp: true,
  inAll: { quick: false, full: false },
  options: [
    new Option('--steps <list>', `load: runners per host at each step, lowest first (${LOAD_STEPS.join(',')})`).argParser(parseLoadSteps),
    new Option(
      '--step-seconds <s>',
      `load: seconds each step is measured for, once every runner has connected and a one-second warm-up has passed (${LOAD_SECONDS})`,
    ).argParser(intArg(1, 600)),
    RECORDS_OPTION,
    RATE_OPTION,
    serversOption,
  ],
  ask: (o, profile) => {
    const servers = value<string[]>(o, 'servers');
    return {
      load: {
        ...loadWorkload({
          steps: value<number[]>(o, 'steps') ?? LOAD_STEPS,
          records: value<number>(o, 'records') ?? MONITOR_DEFAULTS[profile].records,
          rate: value<number>(o, 'rate') ?? MONITOR_DEFAULTS[profile].rate,
          stepSeconds: value<number>(o, 'stepSeconds') ?? LOAD_SECONDS,
        }),
        ...(servers && { servers }),
      },
    };
  },
  check(o) {
    if (o.servers && o.hosts)
      throw new UsageError("load --servers runs on this host: the server runners serve loopback only (--hosts is the built-in IOC's)");
  },
  // With servers, the reference clients (c-libca and c-pvxs), else the usual choice.
  clients: (list, o) => (o?.servers ? referenceClients('load', list, ['monitor']) : undefined),
  steps: (w, ready) =>
    w.load ? (w.load.servers ? serverLoadRows(w.load.servers, ready).length : serving(ready, 'monitor').length) * w.load.steps.length : 0,
  async run(w, ctx, results) {
    const lw = w.load;
    if (!lw) return;
    if (lw.servers) {
      results.load = await runServersLoad(lw, ctx);
      return;
    }
    // Every agent of --hosts runs the step's runners of each client, against the IOC where it is
    // placed (here unless --place ioc=); without --hosts, this host runs them and the IOC.
    const pl = ctx.placement;
    const clients = serving(ctx.ready, 'monitor');
    const agents = pl.hosts.filter((h) => h.name !== LOCAL);
    const hosts = pl.spread && agents.length > 0 ? agents : [pl.hosts[0]!];
    await Promise.all(
      agents
        .filter((h) => hosts.includes(h))
        .map((h) =>
          h.prepare(
            clients.map((c) => c.name),
            false,
          ),
        ),
    );
    results.load = await runLoad({
      ...loadOptions(lw, ctx),
      clients,
      hosts,
      iocHost: pl.iocHost,
      server: pl.server,
      runStep: ctx.steps.ramp('load', loadOutcome),
    });
  },
  // The main figure is how many clients (load runners on every host) a client's ramp served with
  // no loss, no grown latency and no failed runner. Giving way at a later step is how the limit is
  // found; giving way at the first step (no figure) is incomplete.
  figures: (r) => {
    const l = r.load;
    if (!l) return [];
    return [
      {
        key: 'load',
        title: loadTitle(l),
        figure: l.workload.servers ? 'clients a server served with no loss' : 'clients served with no loss',
        ...(l.workload.servers && { servers: true as const }),
        unit: 'clients',
        better: 'higher' as const,
        stealPercent: l.stealPercent,
        clients: l.clients.map((cl): ClientFigure => {
          const mine = l.steps.filter((x) => x.client === cl.client);
          const values = cl.served > 0 ? [cl.served] : [];
          const problems: string[] = [];
          if (mine.length === 0) problems.push('no step ran');
          else if (cl.served === 0) problems.push(`gave way at its first step (${loadLimitNote(cl, l)})`);
          const version = mine.flatMap((x) => x.runners).find((x) => x.version)?.version;
          return { client: cl.client, version, values, stat: stat(values), problems };
        }),
      },
    ];
  },
  text: (r, markdown) => (r.load ? `${loadText(r.load, markdown)}${stealNote(r.load.stealPercent)}` : ''),
  // How many clients each client served with no loss and what limited it, beside the chart of
  // updates/s and p99 latency against the clients served.
  html: async (r) =>
    r.load
      ? {
          charts: [{ cls: 'load', caption: 'updates/s received and p99 latency against the clients served', svg: await loadChart(r.load) }],
          findings: loadTable(r.load),
          details: { text: loadDetails(r.load) },
        }
      : {},
};

/** `--steps 1,2,4,8`: runners per host at each step, each step more than the one before. */
export function parseLoadSteps(v: string): number[] {
  const steps = listArg(v).map((x) => {
    const n = Number(x);
    if (!/^\d+$/.test(x) || !(n >= 1 && n <= 1000)) throw new InvalidArgumentError(`"${x}" is not a number of runners from 1 to 1000`);
    return n;
  });
  if (steps.length === 0) throw new InvalidArgumentError('no step given');
  // a client that gives way at a step skips every later one: a smaller step after a larger one would never run
  for (let i = 1; i < steps.length; i++) {
    if (steps[i]! <= steps[i - 1]!)
      throw new InvalidArgumentError(`each step must run more runners than the one before (${steps[i]} after ${steps[i - 1]})`);
  }
  return steps;
}

/** What every load ramp of a run takes from the workload and the run: its steps, their size and
 *  time, the progress, the deadline. */
function loadOptions(lw: LoadWorkload, ctx: SuiteContext) {
  return {
    steps: lw.steps,
    records: lw.records,
    rate: lw.rateHz,
    stepSeconds: lw.seconds,
    onProgress: ctx.progress,
    // This host's cores are in the report already; another host's come from its own report.
    hostCores: { [LOCAL]: ctx.report.cpu.cores },
    ...ctx.deadline(lw.seconds),
    onSkip: (n: number) => ctx.steps.skip(n),
  };
}

/** The rows of `load --servers`: each server over each protocol a reference client speaks. */
export function serverLoadRows(
  servers: readonly string[],
  ready: readonly ClientSpec[],
): { server: string; protocol: ServerProtocol; client: ClientSpec }[] {
  return servers.flatMap((server) =>
    servedProtocols(server).flatMap((protocol) => {
      const client = referenceFor(ready, protocol, ['monitor']);
      return client ? [{ server, protocol, client }] : [];
    }),
  );
}

/** The servers' load: per server and protocol, the load ramp of its reference client against it on
 *  this host, a row each (`node (PVA)`). */
async function runServersLoad(lw: LoadWorkload, ctx: SuiteContext): Promise<LoadResults> {
  const steal = stealMeter();
  const parts: LoadResults[] = [];
  for (const row of serverLoadRows(lw.servers!, ctx.ready)) {
    const label = `${row.server} (${row.protocol})`;
    let why: string | undefined;
    const part = await runLoad({
      ...loadOptions(lw, ctx),
      clients: [row.client],
      python: ctx.python,
      runStep: (step, _client, body) => ctx.steps.ramp('load', loadOutcome)(step, label, body),
      serve: async () => {
        const c = await startCounting(row.server, ctx.python, lw.records, lw.rateHz);
        return { ...c, counterNames: () => c.names };
      },
    }).catch((e: unknown) => {
      why = (e as Error).message;
      return undefined;
    });
    if (part) parts.push(relabel(part, row.client.name, label));
    else ctx.progress(`${label}: ${why}`);
  }
  const first = parts[0];
  return {
    workload: lw,
    hosts: first?.hosts ?? [],
    iocHost: first?.iocHost ?? LOCAL,
    steps: parts.flatMap((p) => p.steps),
    clients: parts.flatMap((p) => p.clients),
    stealPercent: steal(),
  };
}

/** A server's load results with its client's rows named for the server. */
function relabel(r: LoadResults, client: string, label: string): LoadResults {
  return {
    ...r,
    steps: r.steps.map((s) => (s.client === client ? { ...s, client: label } : s)),
    clients: r.clients.map((c) => (c.client === client ? { ...c, client: label } : c)),
  };
}
