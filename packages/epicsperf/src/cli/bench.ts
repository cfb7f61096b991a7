// `epicsperf bench [workload|all]`: every client on the quick profile (or --full), one comparison
// table per workload on stdout, progress on stderr, and every run kept as JSON and HTML in the
// results folder. The workloads, their options and their defaults are src/workloads/'s.
import type { Command, Option } from 'commander';
import { doctor } from '../doctor.js';
import { CLIENTS, findClient } from '../clients/index.js';
import { PROFILES } from '../bench/profiles.js';
import { compactResults, runBench } from '../workloads/suite.js';
import { benchHtml, renderBench, WORKLOADS } from '../workloads/index.js';
import type { BenchWorkload, OptionValues, ProfileName, RunOptions, Workloads } from '../workloads/workload.js';
import { writeAtomic } from 'epics-ops';
import { ensureWritable, keepRun, resultsDir } from '../results/store.js';
import { exitOnSignals, parseClientList, placement, prepareClients, type HostOpts } from './common.js';
import { BenchProgress } from './progress.js';
import { formatOption, hostsOption, intArg, keysOption, placeOption, serverOption } from '../options.js';
import { UsageError } from '../errors.js';
import { gatewayProtocol, isGateway } from '../ioc/gateway.js';

interface Opts extends HostOpts {
  full?: boolean;
  clients?: string;
  repeat?: number;
  deadline?: number;
  out?: string;
  html?: string;
  resultsDir?: string;
  keep: boolean;
  format: 'table' | 'markdown' | 'json';
}

/** The workloads `bench all` runs on a profile. */
export function familiesInAll(profile: ProfileName): BenchWorkload[] {
  return WORKLOADS.filter((w) => w.inAll[profile]);
}

/** Each option of the workloads once (two workloads may share one), with the workloads it serves. */
function workloadOptions(): Map<Option, BenchWorkload[]> {
  const owners = new Map<Option, BenchWorkload[]>();
  for (const w of WORKLOADS) for (const o of w.options) owners.set(o, [...(owners.get(o) ?? []), w]);
  return owners;
}

export function register(program: Command): void {
  const names = WORKLOADS.map((w) => w.name);
  const ramps = WORKLOADS.filter((w) => w.ramp).map((w) => `bench ${w.name}`);
  const options = workloadOptions();
  const command = program
    .command('bench')
    .addOption(serverOption())
    .addOption(hostsOption())
    .addOption(placeOption())
    .addOption(keysOption())
    .description(
      'run every client on the workloads, compare them, and keep the results (quick profile by default; --full for the published workloads)',
    )
    .argument(
      '[workload]',
      `${names.join(', ')}, or all (quick: ${familiesInAll('quick')
        .map((w) => w.name)
        .join(', ')}; --full: ${familiesInAll('full')
        .map((w) => w.name)
        .join(', ')})`,
      'all',
    )
    .option(
      '--full',
      `the published workloads, ${PROFILES.full.repeat} runs each, no client deadline (${ramps.join(', ')} always run the full profile's)`,
    )
    .option('--clients <list>', 'comma-separated clients (default: every client that runs the workload)')
    .option('--repeat <n>', `runs per client and workload (quick ${PROFILES.quick.repeat}, --full ${PROFILES.full.repeat})`, intArg(1, 100))
    .option(
      '--deadline <s>',
      `seconds one client may take on one workload run, from its start, before it is stopped (quick ${String(PROFILES.quick.clientDeadlineS)} beyond the run's own time, --full none)`,
      intArg(1, 86_400),
    )
    .option('--results-dir <dir>', 'where every run is kept (default: $EPICSPERF_RESULTS, else results/ under EPICSPERF_HOME)')
    .option('--no-keep', 'do not keep this run in the results folder')
    .option('--out <file>', 'also write the JSON results (environment, options, every raw figure) here')
    .option('--html <file>', 'also write the HTML report here')
    .addOption(formatOption(['table', 'markdown', 'json'] as const));
  for (const o of options.keys()) command.addOption(o);
  command.action(async (workload: string, opts: Opts & OptionValues) => {
    const only = workload === 'all' ? undefined : WORKLOADS.find((w) => w.name === workload);
    if (workload !== 'all' && !only) throw new UsageError(`workload must be ${names.join(', ')} or all, got "${workload}"`);
    // An option of a workload the run does not include is a mistake, not something to ignore.
    if (only) {
      for (const [o, owners] of options) {
        if (opts[o.attributeName()] !== undefined && !owners.includes(only)) {
          const of = owners.map((w) => `bench ${w.name}`).join(' and ');
          throw new UsageError(`${o.long} is an option of ${of}, not of bench ${workload}`);
        }
      }
    }
    // A ramp raises the load until updates are lost: it is not in the quick profile, and run alone
    // it runs the full profile's.
    const profile = opts.full || only?.ramp ? PROFILES.full : PROFILES.quick;
    const families = only ? [only] : familiesInAll(profile.name);
    const custom =
      opts.repeat !== undefined || opts.deadline !== undefined || [...options.keys()].some((o) => opts[o.attributeName()] !== undefined);
    const asked: Partial<Workloads> = {};
    for (const w of families) Object.assign(asked, w.ask(opts, profile.name, w === only));
    for (const w of families) w.check?.(opts, asked);
    const workloads: Workloads = { snapshot: [], monitor: false, ...asked };
    // Stored with every run, whether the workloads that decide them run or not (each decided once:
    // test/unit/workloads-registry.test.ts).
    const runOptions = Object.assign({}, ...WORKLOADS.map((w) => w.runOptions?.(opts, profile.name))) as RunOptions;
    const own = only?.clients?.(opts.clients, opts);
    const chosen =
      own !== undefined
        ? own.map((c) => findClient(c)!)
        : opts.clients === undefined
          ? // Every client whose runner serves the task of a workload of the run (a workload with a row per client: every client).
            CLIENTS.filter((c) =>
              families.some((w) => w.rowPerClient || (w.serves ? c.tasks.includes(w.serves) : w.clients?.()?.includes(c.name))),
            )
          : parseClientList(opts.clients, !only || only.rowPerClient || !only.serves ? 'all' : only.serves);
    // A gateway serves the clients of its protocol only.
    const through = opts.server !== undefined && isGateway(opts.server) ? gatewayProtocol(opts.server) : undefined;
    const clients = through ? chosen.filter((c) => c.protocol === through) : chosen;
    if (clients.length < chosen.length) {
      const other = through === 'CA' ? 'PVA' : 'CA';
      if (clients.length === 0) throw new UsageError(`--server ${opts.server} is a ${through} gateway: give ${through} clients`);
      process.stderr.write(`epicsperf: --server ${opts.server} is a ${through} gateway: the ${other} clients are left out\n`);
    }
    if (workloads.headroom && (opts.repeat ?? 1) > 1)
      process.stderr.write(
        `epicsperf: headroom: the ramp runs once for each client (--repeat ${opts.repeat} applies to the other workloads)\n`,
      );
    const deadline = opts.deadline ?? profile.clientDeadlineS;
    const dir = opts.resultsDir ?? resultsDir();
    if (opts.keep) ensureWritable(dir);
    exitOnSignals();
    const snapshots = workloads.snapshot.length > 0;
    const python = await prepareClients(clients, true, snapshots);
    const pl = await placement(opts, clients, python, snapshots);
    const report = await doctor();
    const progress = new BenchProgress();
    const results = await runBench({
      placement: pl,
      clients,
      workloads,
      repeat: opts.repeat ?? profile.repeat,
      ...runOptions,
      profile: custom ? 'custom' : profile.name,
      clientDeadlineS: deadline,
      // A profile's deadline is counted beyond the time the run asks for (30 s of samples get 30 s more).
      ...(opts.deadline === undefined && deadline !== undefined && { clientDeadlineBeyondWork: true }),
      python,
      report,
      onProgress: (s) => progress.phaseUpdate(s),
      onStep: (e) => progress.step(e),
    }).finally(() => pl.close());
    progress.done();
    const json = JSON.stringify(compactResults(results), null, 2) + '\n';
    const html = await benchHtml(results);
    if (opts.out) writeAtomic(opts.out, json);
    if (opts.html) writeAtomic(opts.html, html);
    process.stdout.write(opts.format === 'json' ? json : renderBench(results, opts.format === 'markdown'));
    if (opts.keep) {
      const kept = keepRun(dir, results, json, html);
      process.stderr.write(
        `epicsperf: took ${Math.round(results.durationS ?? 0)} s; report: ${kept.html}\nepicsperf: results: ${kept.json}\n`,
      );
    }
  });
}
