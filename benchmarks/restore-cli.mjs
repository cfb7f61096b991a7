// A restore of N settings that all differ, as a user runs it: `epicsperf restore FILE --yes` (this
// project's command, which reports its read, write and read-back times), and pyepics as PSI's
// snapshot uses it (benchmarks/saveset-pyepics.py restore: connect, put with completion callbacks,
// read back), on two built-in IOCs: one serving only the settings, and the main job's (1,000
// counters at 10 Hz and a 1M-element array at 1 Hz) with the settings beside them.
//
//   node benchmarks/restore-cli.mjs [--settings 10000] [--repeat 3] [--out FILE]
//
// Per IOC: save every setting once (the command's `snapshot --save`, and pyepics's save), then per
// repeat and client in turn: change every setting with this library, restore, and stop unless the
// restore said every setting was written and read back equal. Writes JSON (default
// benchmarks/results/restore-cli.json) and Markdown beside it.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { otherValue } from './settings.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(HERE, '../packages/epicsperf/dist');
const BIN = resolve(HERE, '../packages/epicsperf/bin/epicsperf.js');
const { startIoc, settingNames } = await import(`${DIST}/ioc/index.js`);
const { ensurePythonEnv } = await import(`${DIST}/pyenv/index.js`);
const { Context } = await import(resolve(HERE, '../packages/client/dist/index.js'));

const { values: opt } = parseArgs({
  options: {
    settings: { type: 'string', default: '10000' },
    repeat: { type: 'string', default: '3' },
    out: { type: 'string', default: join(HERE, 'results/restore-cli.json') },
  },
});
const n = Number(opt.settings);
const repeat = Number(opt.repeat);
if (!Number.isInteger(n) || n < 10 || !(repeat >= 1)) throw new Error('--settings: an integer >= 10; --repeat >= 1');

const IOCS = [
  { label: 'settings only', options: { records: 1, rate: 0, arrayElements: 0, settings: n } },
  { label: "the main job's IOC and the settings", options: { settings: n } },
];
const python = await ensurePythonEnv();
const work = mkdtempSync(join(tmpdir(), 'restore-cli-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

/** Run a command to its end; its stdout, or a thrown error with the end of its stderr. */
function run(cmd, args, env) {
  const r = spawnSync(cmd, args, { env, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 600_000 });
  if (r.status !== 0 && !(r.status === 1 && r.stdout))
    throw new Error(`${[cmd, ...args].join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return r.stdout;
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)];
const rows = [];
for (const ioc of IOCS) {
  const server = await startIoc({ ...ioc.options, startTimeout: 300_000 });
  const env = { ...process.env, ...server.env };
  const ctx = new Context({ env: { ...server.env } });
  const names = settingNames(server.prefix, n);
  const namesFile = join(work, 'names.txt');
  writeFileSync(namesFile, `${names.join('\n')}\n`);
  const cliSaved = join(work, 'saved.snapshot');
  const pySaved = join(work, 'saved.json');
  const samples = { cli: [], pyepics: [] };
  try {
    run(process.execPath, [BIN, 'snapshot', namesFile, '--save', cliSaved, '--format', 'json'], env);
    run(python, [join(HERE, 'saveset-pyepics.py'), 'save', namesFile, pySaved], env);
    for (let r = 1; r <= repeat; r++) {
      for (const client of r % 2 ? ['cli', 'pyepics'] : ['pyepics', 'cli']) {
        await Promise.all(names.map((name, k) => ctx.put(name, otherValue(k + 1), { timeout: 10_000 })));
        const t0 = performance.now();
        if (client === 'cli') {
          const out = JSON.parse(run(process.execPath, [BIN, 'restore', cliSaved, '--yes', '--format', 'json'], env));
          const s = out.summary;
          if (s.restored !== n || s.failed || s.notWritten)
            throw new Error(`epicsperf restore did not restore every setting: ${JSON.stringify(s)}`);
          const t = out.timings;
          samples.cli.push({
            read: t.readMs / 1e3,
            write: t.writeMs / 1e3,
            readBack: t.readBackMs / 1e3,
            process: (performance.now() - t0) / 1e3,
          });
        } else {
          const out = JSON.parse(
            run(python, [join(HERE, 'saveset-pyepics.py'), 'restore', namesFile, pySaved], env)
              .trim()
              .split('\n')
              .pop(),
          );
          if (!out.ok) throw new Error(`pyepics restore failed its own check: ${JSON.stringify(out.counts)}`);
          const p = out.phases;
          samples.pyepics.push({
            read: p.connect,
            write: p.put + p.completion,
            readBack: p.readBack,
            process: (performance.now() - t0) / 1e3,
          });
        }
        console.error(`${ioc.label}, run ${r}, ${client}: ${JSON.stringify(samples[client].at(-1))}`);
      }
    }
  } finally {
    await ctx.close();
    await server.stop();
  }
  const med = (c) => Object.fromEntries(['read', 'write', 'readBack', 'process'].map((k) => [k, median(samples[c].map((x) => x[k]))]));
  rows.push({ ioc: ioc.label, iocOptions: ioc.options, cli: med('cli'), pyepics: med('pyepics'), samples });
}

const table = [
  '| IOC | client | connect or read s | writes with completion s | read-back s | process s | pyepics / epicsperf, writes |',
  '|---|---|---:|---:|---:|---:|---:|',
  ...rows.flatMap((r) =>
    ['cli', 'pyepics'].map((c) => {
      const m = r[c];
      const ratio = c === 'cli' ? (r.pyepics.write / r.cli.write).toFixed(1) : '';
      return `| ${r.ioc} | ${c === 'cli' ? '`epicsperf restore --yes`' : 'pyepics'} | ${m.read.toFixed(3)} | ${m.write.toFixed(3)} | ${m.readBack.toFixed(3)} | ${m.process.toFixed(2)} | ${ratio} |`;
    }),
  ),
].join('\n');
console.log(table);
const result = {
  date: new Date().toISOString(),
  host: hostname(),
  cores: cpus().length,
  node: process.version,
  command: `node benchmarks/restore-cli.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  settings: n,
  repeat,
  measured:
    "epicsperf restore: the read, write and read-back times it reports (--format json); pyepics: saveset-pyepics.py's phases, connect (creating and connecting every PV), put and completion, read-back; process: from spawning the process to its exit; medians",
  rows,
};
writeFileSync(opt.out, `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(
  opt.out.replace(/\.json$/, '.md'),
  `${result.command} (${result.date}, ${result.host}, ${result.cores} cores; ${result.measured}; ${repeat} runs)\n\nA restore of ${n.toLocaleString('en-US')} settings that all differ, median s:\n\n${table}\n`,
);
process.exit(0);
