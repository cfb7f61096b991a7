// One operation of benchmarks/saveset.mjs with this project's library (epics-client/saveset), in a
// process of its own, as benchmarks/saveset-pyepics.py does it with pyepics:
//
//   node saveset-client.mjs save|compare-live|restore NAMES_FILE SAVED_FILE CLIENT_DIST [TIMEOUT_MS] [rewrite]
//
// save writes the save set to SAVED_FILE in this project's snapshot file format; compare-live compares it with the live values
// (tolerance 0); restore writes it back (waiting for every write's completion; only the PVs that
// differ, or every PV with `rewrite`) and then reads every PV back, comparing with the save set
// (tolerance 0).
//
// Prints one JSON line: {op, client, n, seconds, cpuSeconds, phases, counts, failures, ok}.
// `seconds` is the wall time from before the Context is created to the end, file reading and
// writing included; process start and imports are not. `cpuSeconds` is this process's CPU
// (process.cpuUsage(), user + system) over the same span. `ok` is this script's own check.
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [op, namesFile, savedFile, dist, timeoutArg, mode] = process.argv.slice(2);
const rewrite = mode === 'rewrite';
if (!['save', 'compare-live', 'restore'].includes(op) || !namesFile || !savedFile || !dist) {
  console.error('usage: node saveset-client.mjs save|compare-live|restore NAMES_FILE SAVED_FILE CLIENT_DIST [TIMEOUT_MS]');
  process.exit(2);
}
const timeout = Number(timeoutArg ?? 2000);
const { Context } = await import(`${dist}/index.js`);
const { save, compareLive, restore, writeSnapshot, parseSnapshot } = await import(`${dist}/saveset/index.js`);

const cpuSeconds = (u) => (u.user + u.system) / 1e6;
const wall0 = performance.now();
const cpu0 = process.cpuUsage();
const phases = {};
let t = performance.now();
const phase = (name) => {
  const now = performance.now();
  phases[name] = (now - t) / 1000;
  t = now;
};

const names = readFileSync(namesFile, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const ctx = new Context();
let counts;
let failures = [];
let ok;
let restoreReport;
/** The PVs of a comparison that are not equal (a PvDiff's `status`, or its `equal` flag). */
const unequal = (diff) => diff.pvs.filter((d) => (d.status !== undefined ? d.status !== 'equal' : d.equal === false));

if (op === 'save') {
  const set = await save(ctx, names, { timeout });
  phase('save');
  writeFileSync(savedFile, writeSnapshot(set));
  phase('write');
  const saved = set.pvs.filter((p) => p.ok).length;
  counts = { saved, notSaved: set.pvs.length - saved };
  failures = set.pvs.filter((p) => !p.ok).map((p) => ({ name: p.name, reason: p.error }));
  ok = saved === names.length && set.pvs.length === names.length;
} else {
  const set = parseSnapshot(readFileSync(savedFile, 'utf8'));
  phase('read');
  if (op === 'compare-live') {
    const diff = await compareLive(ctx, set, { timeout, tolerance: { abs: 0 } });
    phase('compare');
    const s = diff.summary;
    counts = { ...s, differentNames: unequal(diff).map((d) => d.name) };
    ok = s.notConnected === 0 && s.onlyA === 0 && s.onlyB === 0 && s.equal + s.different === names.length;
  } else {
    const rep = await restore(ctx, set, { timeout, rewrite });
    phase('restore');
    Object.assign(phases, {
      restoreRead: rep.timings.readMs / 1000,
      restoreWrite: rep.timings.writeMs / 1000,
      restoreReadBack: rep.timings.readBackMs / 1000,
    });
    restoreReport = { ...rep, set };
  }
}
// The operation ends here: restore() read back every PV it wrote (and read every other one equal
// before writing). Then, outside the measured span, every PV is read once more and compared.
const seconds = (performance.now() - wall0) / 1000;
const cpu = cpuSeconds(process.cpuUsage(cpu0));
if (restoreReport) {
  const rep = restoreReport;
  const back = await compareLive(ctx, rep.set, { timeout, tolerance: { abs: 0 } });
  const s = rep.summary;
  counts = { ...s, readBackEqual: back.summary.equal };
  failures = [
    ...rep.pvs
      .filter((p) => !['restored', 'equal'].includes(p.outcome))
      .map((p) => ({ name: p.name, reason: `${p.outcome}${p.reason ? `: ${p.reason}` : ''}` })),
    ...unequal(back).map((d) => ({ name: d.name, reason: 'read back differs' })),
  ];
  ok =
    s.failed === 0 && s.skipped === 0 && s.notWritten === 0 && s.restored + s.equal === names.length && back.summary.equal === names.length;
}
await ctx.close(); // after the measurement, as pyepics's context ends at its exit
console.log(
  JSON.stringify({
    op,
    client: rewrite ? 'node-rewrite' : 'node',
    n: names.length,
    seconds,
    cpuSeconds: cpu,
    processCpuSeconds: cpuSeconds(process.cpuUsage()),
    phases,
    counts,
    failures: failures.slice(0, 20),
    failureCount: failures.length,
    ok,
  }),
);
process.exit(0);
