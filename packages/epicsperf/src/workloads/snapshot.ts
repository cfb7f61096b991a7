// The snapshot workload: each client reads a list of names, some of which no IOC serves, each
// with its own timeout, against one built-in IOC; after the 2012 snapshot study.
import { Option } from 'commander';
import { UsageError } from '../errors.js';
import { stealMeter } from '../procstat.js';
import { DEFAULTS } from '../defaults.js';
import { listArg, timeoutOption } from '../options.js';
import { runSnapshot } from '../bench/snapshot.js';
import { snapshotOutcome } from '../report/outcomes.js';
import { figure, plural } from '../report/figures.js';
import { stealNote } from '../report/bench.js';
import { snapshotBenchTable, summarizeSnapshot } from '../report/snapshot-bench.js';
import { groupByClient } from '../report/table.js';
import type { BenchResults, SnapshotRun, SnapshotWorkload } from '../results/index.js';
import { type BenchWorkload, type OptionValues, type ProfileName, serving, value, byProfile, profileOption } from './workload.js';

/** After the 2012 snapshot study, plus the 10,000- and 100,000-name rows of the client's own
 *  targets (the facility scale); any other `N+M` is accepted too (parseSnapshotWorkload). */
export const SNAPSHOT_WORKLOADS: readonly SnapshotWorkload[] = [
  { id: '97', connected: 97, missing: 0 },
  { id: '97+4', connected: 97, missing: 4 },
  { id: '97+15', connected: 97, missing: 15 },
  { id: '1000+95', connected: 1000, missing: 95 },
  { id: '10000', connected: 10_000, missing: 0 },
  { id: '10000+95', connected: 10_000, missing: 95 },
  { id: '100000+95', connected: 100_000, missing: 95 },
];

/** The most counters a snapshot reads (the built-in IOC's facility scale), and the most missing names. */
export const SNAPSHOT_MAX_CONNECTED = 100_000;
export const SNAPSHOT_MAX_MISSING = 10_000;

/** Each profile's snapshot workloads: the quick one two of the study's, the full one the study's
 *  lists and 1,000 and 10,000 names with 95 missing. */
export const SNAPSHOT_DEFAULTS: Record<ProfileName, readonly string[]> = {
  quick: ['97+15', '1000+95'],
  full: ['97', '97+4', '97+15', '1000+95', '10000+95'],
};

/**
 * A snapshot workload from its id: `N` or `N+M`, N counters the IOC serves (1-100000) and M names
 * it does not (0-10000). The id is kept in its plain form (`97+0` is `97`, no leading zeros).
 */
export function parseSnapshotWorkload(id: string): SnapshotWorkload {
  const m = /^(\d{1,6})(?:\+(\d{1,5}))?$/.exec(id.trim());
  const connected = Number(m?.[1]);
  const missing = Number(m?.[2] ?? 0);
  if (!m || connected < 1 || connected > SNAPSHOT_MAX_CONNECTED || missing > SNAPSHOT_MAX_MISSING) {
    throw new UsageError(
      `snapshot workload "${id}" is not N or N+M (N names that exist, 1-${SNAPSHOT_MAX_CONNECTED}; M missing, 0-${SNAPSHOT_MAX_MISSING}), e.g. 1000+95 or 100000+95`,
    );
  }
  return { id: missing ? `${connected}+${missing}` : String(connected), connected, missing };
}

export function snapshotNames(w: SnapshotWorkload): string[] {
  const names = Array.from({ length: w.connected }, (_, i) => `TEST:CALC${i + 1}`);
  // Missing names spread evenly through the list, as in a real save set.
  for (let k = 0; k < w.missing; k++) {
    const at = Math.floor(((k + 1) * names.length) / (w.missing + 1));
    names.splice(at, 0, `TEST:MISSING${k + 1}`);
  }
  return names;
}

const figures = (r: BenchResults) =>
  r.snapshot.map((s) => ({
    key: `snapshot ${s.workload.id}`,
    title: `Snapshot ${s.workload.id}: ${plural(s.workload.connected, 'PV')} that exist + ${s.workload.missing} missing, timeout ${r.options.timeoutMs} ms`,
    figure: 'wall time',
    unit: 's',
    better: 'lower' as const,
    stealPercent: s.stealPercent,
    clients: figure<SnapshotRun>(
      s.runs,
      (x) => (x.wallMs === undefined || x.stoppedAfterS !== undefined ? undefined : x.wallMs / 1000),
      (x) => {
        const p: string[] = [];
        if (x.wallMs !== undefined && x.answered < s.workload.connected)
          p.push(`${plural(s.workload.connected - x.answered, 'PV')} that exist unanswered`);
        if (x.wrong) p.push(`${plural(x.wrong, 'wrong answer')}`);
        if (x.unchecked) p.push(`values not checked: ${x.unchecked}`);
        return p;
      },
    ),
  }));

const table = (s: BenchResults['snapshot'][number], markdown = false) =>
  snapshotBenchTable(summarizeSnapshot(groupByClient<SnapshotRun>(s.runs), s.workload.connected), markdown);

export const snapshot: BenchWorkload = {
  name: 'snapshot',
  serves: 'snapshot',
  ramp: false,
  inAll: { quick: true, full: true },
  options: [
    profileOption(timeoutOption(), String(DEFAULTS.timeoutMs)),
    new Option(
      '--snapshots <ids>',
      `snapshot workloads, N+M: N names that exist, M missing, e.g. ${SNAPSHOT_WORKLOADS.map((w) => w.id).join(', ')} (${byProfile(SNAPSHOT_DEFAULTS, (d) => d.join(','))})`,
    ),
  ],
  ask: (o: OptionValues, profile) => ({
    snapshot: listArg(value<string>(o, 'snapshots') ?? SNAPSHOT_DEFAULTS[profile].join(',')).map(parseSnapshotWorkload),
  }),
  runOptions: (o) => ({ timeoutMs: value<number>(o, 'timeout') ?? DEFAULTS.timeoutMs }),
  steps: (w, ready, repeat) => repeat * w.snapshot.length * serving(ready, 'snapshot').length,
  async run(w, ctx, results) {
    if (!w.snapshot.length) return;
    const clients = serving(ctx.ready, 'snapshot');
    const records = Math.max(...w.snapshot.map((x) => x.connected));
    // Counters tick slowly here: the snapshot reads values, it does not race updates.
    const ioc = await ctx.placement.startIoc({ records, rate: 1, arrayElements: 0 });
    const timeoutMs = ctx.run.timeoutMs;
    try {
      for (const workload of w.snapshot) {
        const entry: BenchResults['snapshot'][number] = { workload, runs: [] };
        results.snapshot.push(entry);
        const names = snapshotNames(workload);
        const unservedNames = new Set<string>();
        const steal = stealMeter();
        for (let rep = 1; rep <= ctx.repeat; rep++) {
          for (const client of clients) {
            const run = () =>
              runSnapshot({
                client,
                python: ctx.python,
                env: ioc.env,
                names,
                timeoutMs,
                unservedNames,
                onProgress: ctx.progress,
                ...ctx.placement.runOn(client.name),
                ...ctx.deadline(timeoutMs / 1000),
              });
            entry.runs.push(await ctx.steps.run(`snapshot ${workload.id}`, client.name, rep, ctx.repeat, run, snapshotOutcome));
          }
        }
        entry.stealPercent = steal();
      }
    } finally {
      await ioc.stop();
    }
  },
  figures,
  listed: (r) => r.snapshot.map((s) => s.workload.id),
  text: (r, markdown) =>
    r.snapshot
      .map(
        (s) =>
          `\nSnapshot ${s.workload.id}: ${s.workload.connected} PVs that exist + ${s.workload.missing} missing, timeout ${r.options.timeoutMs} ms${stealNote(s.stealPercent)}\n\n` +
          table(s, markdown),
      )
      .join(''),
  html: async (r, key) => {
    const s = r.snapshot.find((x) => `snapshot ${x.workload.id}` === key);
    return s ? { details: { text: table(s) } } : {};
  },
};
