// Save, compare with live and restore of the built-in IOC's settings PREFIX:SET:1..N: this project's
// library (epics-client/saveset, benchmarks/saveset-client.mjs) beside pyepics used the way PSI's
// snapshot tool uses it (benchmarks/saveset-pyepics.py).
//
//   node benchmarks/saveset.mjs [--sizes 1000,10000] [--repeat 3] [--clients node,pyepics] [--timeout 2000] [--every 10] [--out FILE]
//
// For each size the IOC is started with that many settings. Each repeat runs the clients in turn
// (node first in odd repeats, pyepics first in even ones), each doing, in a fresh process per
// operation: save; then this script changes one PV in `--every` (default 10, of every type; 1:
// every PV) with puts of this library; compare-live (each client must find exactly those
// different); restore (writes with
// completion, then the client's own read-back); this script then reads every PV with the library
// and fails unless each holds its starting value again.
//
// Times are taken inside each process: from before the client creates its Context / PVs to the end
// of the operation (names and save-set files read and written included), process start and imports
// excluded; CPU is the process's user + system CPU over the same span. Prints a table and writes
// JSON (default benchmarks/results/saveset.json) and Markdown beside it: the operations, the writes
// of each restore alone (its write phase: the puts and their completions), and the phases.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(HERE, '../packages/epicsperf/dist');

const { values: opt } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,10000' },
    repeat: { type: 'string', default: '3' },
    clients: { type: 'string', default: 'node,node-rewrite,pyepics' },
    timeout: { type: 'string', default: '2000' },
    every: { type: 'string', default: '10' },
    out: { type: 'string', default: join(HERE, 'results/saveset.json') },
    'client-dist': { type: 'string', default: resolve(HERE, '../packages/client/dist') },
  },
});
const CLIENT_DIST = resolve(opt['client-dist']);
const { startIoc, settingNames, settingValue } = await import(`${DIST}/ioc/index.js`);
const { otherValue } = await import('./settings.mjs');
const { ensurePythonEnv } = await import(`${DIST}/pyenv/index.js`);
const { Context } = await import(`${CLIENT_DIST}/index.js`);

const sizes = opt.sizes.split(',').map(Number);
const repeat = Number(opt.repeat);
const timeoutMs = Number(opt.timeout);
const clientNames = opt.clients.split(',');
const OPS = ['save', 'compare-live', 'restore'];
const EVERY = Number(opt.every);
const NODE_CLIENTS = ['node', 'node-rewrite'];
const isNode = (c) => NODE_CLIENTS.includes(c);
for (const c of clientNames) if (!isNode(c) && c !== 'pyepics') throw new Error(`unknown client ${c}: node, node-rewrite or pyepics`);
if (!Number.isInteger(EVERY) || EVERY < 1) throw new Error('--every: an integer >= 1');
if (sizes.some((n) => !Number.isInteger(n) || n < 10) || !(repeat >= 1)) throw new Error('--sizes: integers >= 10; --repeat >= 1');
if (clientNames.some(isNode) && !existsSync(`${CLIENT_DIST}/saveset/index.js`))
  throw new Error(
    `${CLIENT_DIST}/saveset/index.js is missing: build the library with its saveset module (npm run build), or run --clients pyepics`,
  );

const python = await ensurePythonEnv();
const work = mkdtempSync(join(tmpdir(), 'saveset-'));
const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

/** Run one operation of one client in its own process; resolves its JSON answer. */
function runOp(client, op, env, namesFile, savedFile) {
  const [cmd, args] = isNode(client)
    ? [
        process.execPath,
        [
          join(HERE, 'saveset-client.mjs'),
          op,
          namesFile,
          savedFile,
          CLIENT_DIST,
          String(timeoutMs),
          client === 'node-rewrite' ? 'rewrite' : '',
        ],
      ]
    : [python, [join(HERE, 'saveset-pyepics.py'), op, namesFile, savedFile, '--timeout', String(timeoutMs / 1000)]];
  return new Promise((resolveRun, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      const line = out.trim().split('\n').pop();
      let answer;
      try {
        answer = JSON.parse(line);
      } catch {
        reject(new Error(`${client} ${op} exited (${code ?? signal}) without an answer: ${err.trim().split('\n').slice(-5).join(' | ')}`));
        return;
      }
      answer.processSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      resolveRun(answer);
    });
  });
}

const plainValue = (v) => (typeof v === 'object' && v !== null && typeof v.length === 'number' ? Array.from(v) : v);
const same = (a, b) => (Array.isArray(b) ? Array.isArray(a) && a.length === b.length && a.every((x, k) => x === b[k]) : a === b);

/** The indices changed before compare and restore: one in EVERY, of every type in turn (1: all). */
function changedIndices(n) {
  if (EVERY === 1) return Array.from({ length: n }, (_, k) => k + 1);
  return Array.from({ length: Math.floor(n / EVERY) }, (_, k) => EVERY * k + 1 + (k % (EVERY < 5 ? 1 : 5)));
}

/** Read every setting with the library; the indices (from 1) whose value is not `want(i)`. */
async function mismatches(ctx, names, want) {
  const got = await Promise.all(
    names.map((name) =>
      ctx.get(name, { timeout: 10_000 }).then(
        (r) => plainValue(r.value),
        (e) => e,
      ),
    ),
  );
  const bad = [];
  got.forEach((v, k) => {
    if (v instanceof Error || !same(v, want(k + 1))) bad.push({ i: k + 1, got: v instanceof Error ? v.message : v, want: want(k + 1) });
  });
  return bad;
}

function fail(message, details) {
  throw new Error(`${message}${details ? `: ${JSON.stringify(details).slice(0, 800)}` : ''}`);
}

const runs = [];
for (const n of sizes) {
  const ioc = await startIoc({ records: 1, rate: 0, arrayElements: 0, settings: n, startTimeout: 300_000 });
  const env = { ...process.env, ...ioc.env };
  const ctx = new Context({ env: { ...ioc.env } });
  const names = settingNames(ioc.prefix, n);
  const namesFile = join(work, `names-${n}.txt`);
  writeFileSync(namesFile, names.join('\n') + '\n');
  const changed = changedIndices(n);
  const changedSet = new Set(changed);
  const changedNames = changed.map((i) => names[i - 1]).sort();
  try {
    for (let r = 1; r <= repeat; r++) {
      const order = r % 2 ? clientNames : [...clientNames].reverse();
      for (const client of order) {
        const start = await mismatches(ctx, names, settingValue);
        if (start.length) fail(`${n} settings: ${start.length} not at their starting value before ${client}'s run ${r}`, start.slice(0, 5));
        const savedFile = join(work, `saved-${client}-${n}.${isNode(client) ? 'snapshot' : 'json'}`);
        const record = (a) => {
          runs.push({ size: n, repeat: r, client, ...a });
          const c = a.counts ?? {};
          const brief = Object.entries(c)
            .filter(([, v]) => typeof v === 'number')
            .map(([k, v]) => `${k} ${v}`)
            .join(', ');
          console.error(
            `${n} run ${r} ${client} ${a.op}: ${a.seconds.toFixed(3)} s (CPU ${a.cpuSeconds.toFixed(3)} s; process ${a.processSeconds.toFixed(2)} s) ${brief}${a.ok ? '' : ' NOT OK'}`,
          );
        };

        const saved = await runOp(client, 'save', env, namesFile, savedFile);
        record(saved);
        if (!saved.ok) fail(`${client} save of ${n} failed its own check`, saved);

        await Promise.all(changed.map((i) => ctx.put(names[i - 1], otherValue(i), { timeout: 10_000 })));
        const afterChange = await mismatches(ctx, names, (i) => (changedSet.has(i) ? otherValue(i) : settingValue(i)));
        if (afterChange.length) fail(`${afterChange.length} settings do not hold what was written before compare`, afterChange.slice(0, 5));

        const compared = await runOp(client, 'compare-live', env, namesFile, savedFile);
        record(compared);
        const found = [...(compared.counts?.differentNames ?? [])].sort();
        delete compared.counts.differentNames;
        if (!compared.ok || compared.counts.different !== changed.length || compared.counts.equal !== n - changed.length)
          fail(`${client} compare-live of ${n} did not find exactly the ${changed.length} changed PVs different`, compared);
        if (found.length && !same(found, changedNames))
          fail(`${client} compare-live of ${n} names other PVs different than the changed ones`, found.slice(0, 10));

        const restored = await runOp(client, 'restore', env, namesFile, savedFile);
        record(restored);
        const after = await mismatches(ctx, names, settingValue);
        if (after.length)
          fail(`after ${client}'s restore of ${n}, ${after.length} settings are not back at their saved value`, after.slice(0, 5));
        if (!restored.ok) fail(`${client} restore of ${n} failed its own check`, restored);
      }
    }
  } finally {
    await ctx.close();
    await ioc.stop();
  }
}

// Medians per size, operation and client.
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const summary = [];
for (const n of sizes) {
  for (const op of OPS) {
    const row = { size: n, op };
    for (const c of clientNames) {
      const mine = runs.filter((x) => x.size === n && x.op === op && x.client === c);
      if (!mine.length) continue;
      const s = mine.map((x) => x.seconds);
      const phaseNames = Object.keys(mine[0].phases ?? {});
      row[c] = {
        runs: mine.length,
        seconds: median(s),
        min: Math.min(...s),
        max: Math.max(...s),
        cpuSeconds: median(mine.map((x) => x.cpuSeconds)),
        processSeconds: median(mine.map((x) => x.processSeconds)),
        phases: Object.fromEntries(phaseNames.map((p) => [p, median(mine.map((x) => x.phases[p] ?? 0))])),
      };
    }
    for (const c of clientNames.filter(isNode)) if (row[c] && row.pyepics) row[`pyepicsOver:${c}`] = row.pyepics.seconds / row[c].seconds;
    summary.push(row);
  }
}

// The issue's limits, at 10,000 PVs.
const at = (op) => summary.find((r) => r.size === 10_000 && r.op === op);
const limits = [];
const restore10k = at('restore');
const compare10k = at('compare-live');
for (const c of clientNames.filter(isNode)) {
  const r = restore10k?.[c];
  if (!r) continue;
  const how = c === 'node' ? 'writing the PVs that differ' : 'writing every PV, as pyepics does';
  limits.push({
    what: `restore of 10,000 with completion and read-back (${c}, ${how})`,
    limit: '<= 2 s',
    measured: `${r.seconds.toFixed(2)} s`,
    met: r.seconds <= 2,
  });
  const ratio = restore10k[`pyepicsOver:${c}`];
  if (ratio !== undefined)
    limits.push({ what: `restore of 10,000: pyepics time / ${c} time`, limit: '>= 10', measured: ratio.toFixed(1), met: ratio >= 10 });
}
if (compare10k?.node)
  limits.push({
    what: 'compare of 10,000 with live',
    limit: '<= 1 s',
    measured: `${compare10k.node.seconds.toFixed(2)} s`,
    met: compare10k.node.seconds <= 1,
  });
const limitsText = limits.length
  ? limits.map((l) => `${l.what}: ${l.measured} (limit ${l.limit}, ${l.met ? 'met' : 'NOT met'})`).join('; ')
  : 'not measured in this run (it has no node client at 10,000 PVs)';

const fmtS = (c) => (c ? `${c.seconds.toFixed(3)} (${c.min.toFixed(3)}-${c.max.toFixed(3)})` : '-');
const opLabel = { save: 'save', 'compare-live': 'compare-live', restore: 'restore + read-back' };
const nodes = clientNames.filter(isNode);
const head = `| operation | PVs | ${clientNames.map((c) => `${c} s`).join(' | ')} | ${clientNames.includes('pyepics') ? nodes.map((c) => `pyepics / ${c} | `).join('') : ''}${clientNames.map((c) => `${c} CPU s`).join(' | ')} |`;
const ratios = (r) =>
  clientNames.includes('pyepics') ? nodes.map((c) => `${r[`pyepicsOver:${c}`] ? r[`pyepicsOver:${c}`].toFixed(1) : '-'} | `).join('') : '';
const table = [
  head,
  `|---|---:|${'---:|'.repeat(head.split('|').length - 4)}`,
  ...summary.map(
    (r) =>
      `| ${opLabel[r.op]} | ${r.size.toLocaleString('en-US')} | ${clientNames.map((c) => fmtS(r[c])).join(' | ')} | ${ratios(r)}${clientNames.map((c) => (r[c] ? r[c].cpuSeconds.toFixed(3) : '-')).join(' | ')} |`,
  ),
].join('\n');
/** A restore's write phase: its puts until every completion came (what a restore writes, alone). */
const writeSeconds = (c, phases) => (isNode(c) ? phases.restoreWrite : (phases.put ?? 0) + (phases.completion ?? 0));
const restores = summary.filter((r) => r.op === 'restore');
const writeHead = `| PVs | changed | ${clientNames.map((c) => `${c} writes s`).join(' | ')} |${clientNames.includes('pyepics') ? nodes.map((c) => ` pyepics / ${c} |`).join('') : ''}`;
const writeTable = [
  writeHead,
  `|---:|---:|${'---:|'.repeat(writeHead.split('|').length - 4)}`,
  ...restores.map((r) => {
    const w = Object.fromEntries(clientNames.filter((c) => r[c]).map((c) => [c, writeSeconds(c, r[c].phases)]));
    const ratio = (c) => (w.pyepics && w[c] ? ` ${(w.pyepics / w[c]).toFixed(1)} |` : ' - |');
    return `| ${r.size.toLocaleString('en-US')} | ${changedIndices(r.size).length.toLocaleString('en-US')} | ${clientNames.map((c) => (w[c] === undefined ? '-' : w[c].toFixed(3))).join(' | ')} |${clientNames.includes('pyepics') ? nodes.map(ratio).join('') : ''}`;
  }),
].join('\n');
const phaseTable = [
  '| operation | PVs | client | phases, median s | process start to exit, median s |',
  '|---|---:|---|---|---:|',
  ...summary.flatMap((r) =>
    clientNames
      .filter((c) => r[c])
      .map(
        (c) =>
          `| ${opLabel[r.op]} | ${r.size.toLocaleString('en-US')} | ${c} | ${Object.entries(r[c].phases)
            .map(([p, s]) => `${p} ${s.toFixed(3)}`)
            .join(', ')} | ${r[c].processSeconds.toFixed(2)} |`,
      ),
  ),
].join('\n');
console.log(table);
console.log(`\n${writeTable}`);
console.log(`\nlimits: ${limitsText}`);

const measured =
  'wall s inside each process, from before the client creates its Context or PVs to the end of the operation (file reading and writing included; process start and imports excluded); CPU s of the process over the same span; medians with min-max';
const result = {
  date: new Date().toISOString(),
  host: hostname(),
  cores: cpus().length,
  node: process.version,
  command: `node benchmarks/saveset.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  sizes,
  repeat,
  clients: clientNames,
  timeoutMs,
  changedEvery: EVERY,
  measured,
  method: {
    node: 'epics-client/saveset: save(ctx, names) and writeSnapshot, compareLive(ctx, set, { tolerance: { abs: 0 } }), restore(ctx, set) (reads every PV, writes those that differ, reads them back); a compareLive of every PV after the restore, outside the time',
    'node-rewrite': 'the same, restore(ctx, set, { rewrite: true }): every PV written, as pyepics does',
    pyepics:
      "pyepics as PSI's snapshot uses it: PV(auto_monitor=False) per name, all connected first; save: a CTRL and a TIME get per PV, PV after PV; compare: every get started, then completed in turn; restore: every put with a completion callback, all completions awaited, then read back as compare reads",
  },
  limits,
  limitsText,
  summary,
  runs,
};
writeFileSync(opt.out, JSON.stringify(result, null, 2) + '\n');
writeFileSync(
  opt.out.replace(/\.json$/, '.md'),
  `${result.command} (${result.date}, ${result.host}, ${result.cores} cores; ${measured})\n\nSave, compare with live and restore of the IOC's settings, median s of ${repeat} runs:\n\n${table}\n\nThe writes of each restore alone (its write phase: every put until its completion came; node writes the PVs that differ, node-rewrite and pyepics every PV), median s:\n\n${writeTable}\n\nPhases inside each process:\n\n${phaseTable}\n`,
);
process.exit(0);
