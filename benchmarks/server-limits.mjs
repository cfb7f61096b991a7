// The Node server against softioc (RSRV and QSRV) on the limits, each workload on both
// servers in turn in one session (`--server softioc|node`, the same PVs): the server process's CPU
// for 100,000 updates/s to one client (c-libca over CA, c-pvxs over PVA), a 10M int64 array to
// c-pvxs, 100,000 PVs served (peak RSS, and a PVA snapshot of all of them from a fresh server, by
// this client and by c-pvxs), and many clients of one server (this client's Contexts, one circuit
// each). Prints Markdown. RECORDS (10000), RATE (10), SAMPLES (50), ELEMENTS (10000000),
// ARRAY_SAMPLES (20), NAMES (100000), CLIENTS (1000), PER_CLIENT (100), MANY_RATES (1,10: a table
// row per rate and server), MANY_S (10).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Context } from '../packages/client/dist/index.js';

const CLI = new URL('../packages/epicsperf/bin/epicsperf.js', import.meta.url).pathname;
const n = (k, d) => Number(process.env[k] ?? d);
const RECORDS = n('RECORDS', 10_000);
const RATE = n('RATE', 10);
const SAMPLES = n('SAMPLES', 50);
const ELEMENTS = n('ELEMENTS', 10_000_000);
const ARRAY_SAMPLES = n('ARRAY_SAMPLES', 20);
const NAMES = n('NAMES', 100_000);
const CLIENTS = n('CLIENTS', 1000);
const PER_CLIENT = n('PER_CLIENT', 100);
const MANY_RATES = (process.env.MANY_RATES ?? '1,10').split(',').map(Number);
const MANY_S = n('MANY_S', 10);
const SERVERS = ['softioc', 'node'];
const tmp = (name) => join(tmpdir(), `epicsperf-server-limits-${process.pid}-${name}`);

function bench(args) {
  const out = tmp('bench.json');
  try {
    execFileSync(process.execPath, [CLI, 'bench', ...args, '--no-keep', '--out', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  } catch {
    // a failed check exits 1: the JSON still says what was measured
  }
  const r = JSON.parse(readFileSync(out, 'utf8'));
  rmSync(out, { force: true });
  return r;
}

const f1 = (x) => (x === undefined || x === null ? '-' : x.toFixed(1));

/** The built-in IOC on `server`, started with the CLI; resolves to its environment, its server process and a stop. */
async function ioc(server, args) {
  const env = tmp('ioc.env');
  rmSync(env, { force: true });
  const cli = spawn(process.execPath, [CLI, 'ioc', '--server', server, ...args, '--write-env', env], { stdio: 'ignore' });
  for (let i = 0; i < 600; i++) {
    try {
      const text = readFileSync(env, 'utf8');
      if (text.trim()) {
        const vars = Object.fromEntries(
          text
            .trim()
            .split('\n')
            .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
        );
        const pid = Number(
          execFileSync('pgrep', ['-P', String(cli.pid)])
            .toString()
            .split('\n')[0],
        );
        const stop = () =>
          new Promise((r) => {
            cli.once('exit', r);
            cli.kill('SIGTERM');
            rmSync(env, { force: true });
          });
        return { env: vars, pid, stop };
      }
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the ${server} IOC did not start`);
}

/** CPU seconds (user + system) and peak RSS (MB) of a process so far. */
function usage(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuS: (Number(f[11]) + Number(f[12])) / 100, peakMb: Number(hwm?.[1] ?? 0) / 1024 };
}

const lines = [];
const say = (s = '') => {
  lines.push(s);
  process.stderr.write(`${s}\n`);
};

// 1. RECORDS x RATE updates/s to one client: the server process's CPU, every update checked.
const monitorRows = [];
for (const [protocol, client] of [
  ['CA', 'c-libca'],
  ['PVA', 'c-pvxs'],
]) {
  for (const server of SERVERS) {
    const r = bench([
      'monitor',
      '--server',
      server,
      '--clients',
      client,
      '--records',
      String(RECORDS),
      '--rate',
      String(RATE),
      '--samples',
      String(SAMPLES),
    ]);
    const run = r.monitor.runs[0];
    monitorRows.push({
      protocol,
      server,
      client,
      cpu: run.iocCpuPercent?.median,
      ups: run.check?.updatesPerSecond,
      ok: run.check?.ok,
      missed: run.check?.missedValues,
      connect: run.connectMs,
      p50: run.check?.latencyMs?.p50,
    });
  }
}

// 2. A 10M int64 array to c-pvxs.
const arrayRows = [];
for (const server of SERVERS) {
  const r = bench([
    'array',
    '--server',
    server,
    '--clients',
    'c-pvxs',
    '--array-type',
    'int64',
    '--array-elements',
    String(ELEMENTS),
    '--array-samples',
    String(ARRAY_SAMPLES),
  ]);
  const run = r.array.runs[0];
  arrayRows.push({ ...run.array, name: server, error: run.error });
}

// 3. NAMES PVs served: a PVA snapshot of all of them from a fresh server, by this client and by c-pvxs.
const list = tmp('names.txt');
writeFileSync(list, Array.from({ length: NAMES }, (_, i) => `TEST:CALC${i + 1}`).join('\n') + '\n');
const snapshotRows = [];
for (const client of ['epics-client', 'c-pvxs']) {
  for (const server of SERVERS) {
    const i = await ioc(server, ['--records', String(NAMES), '--rate', '1', '--array-elements', '0']);
    await new Promise((r) => setTimeout(r, 2000));
    const before = usage(i.pid);
    let r;
    try {
      const args = [
        CLI,
        'snapshot',
        list,
        '--protocol',
        'pva',
        '--timeout',
        '60000',
        '--format',
        'json',
        ...(client === 'c-pvxs' ? ['--client', 'c-pvxs'] : []),
      ];
      r = JSON.parse(
        execFileSync(process.execPath, args, {
          env: { ...process.env, ...i.env },
          maxBuffer: 1 << 30,
          stdio: ['ignore', 'pipe', 'ignore'],
        }).toString(),
      );
    } catch (e) {
      r = JSON.parse(e.stdout.toString());
    }
    const after = usage(i.pid);
    snapshotRows.push({ client, server, answered: r.answered, wallMs: r.wallMs, cpuS: after.cpuS - before.cpuS, peakMb: after.peakMb });
    await i.stop();
  }
}
rmSync(list, { force: true });

// 4. Many clients of one server: CLIENTS Contexts (a circuit each) monitoring PER_CLIENT counters each.
const manyRows = [];
for (const rate of MANY_RATES)
  for (const server of SERVERS) {
    const i = await ioc(server, ['--records', String(PER_CLIENT), '--rate', String(rate), '--array-elements', '0']);
    const names = Array.from({ length: PER_CLIENT }, (_, k) => `TEST:CALC${k + 1}`);
    const contexts = Array.from({ length: CLIENTS }, () => new Context({ env: i.env }));
    let updates = 0;
    let gaps = 0;
    const last = new Map();
    const t0 = performance.now();
    const subs = contexts.flatMap((ctx, c) =>
      names.map((name, k) =>
        ctx.monitor(name, {}, (ev) => {
          if (ev.kind !== 'update') return;
          const key = c * PER_CLIENT + k;
          const prev = last.get(key);
          if (prev !== undefined && ev.value !== prev + 1) gaps++;
          last.set(key, ev.value);
          updates++;
        }),
      ),
    );
    // Connected: every monitor has its first update.
    while (last.size < CLIENTS * PER_CLIENT && performance.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 100));
    const connectS = (performance.now() - t0) / 1000;
    const before = usage(i.pid);
    const u0 = updates;
    await new Promise((r) => setTimeout(r, MANY_S * 1000));
    const after = usage(i.pid);
    const got = updates - u0;
    for (const s of subs) s.close();
    await Promise.all(contexts.map((c) => c.close()));
    manyRows.push({
      rate,
      server,
      connected: last.size,
      connectS,
      got,
      expected: CLIENTS * PER_CLIENT * rate * MANY_S,
      gaps,
      cpu: ((after.cpuS - before.cpuS) / MANY_S) * 100,
      peakMb: after.peakMb,
    });
    await i.stop();
  }

say(
  `Serving ${(RECORDS * RATE).toLocaleString('en')} updates/s to one client (${RECORDS} counters at ${RATE} Hz, ${SAMPLES} samples each, every sample checked)`,
);
say();
say('| protocol | server | client | server CPU % of a core | updates/s | checks | missed | connect ms | latency p50 ms |');
say('|---|---|---|---:|---:|---|---:|---:|---:|');
for (const r of monitorRows)
  say(
    `| ${r.protocol} | ${r.server} | ${r.client} | ${f1(r.cpu)} | ${Math.round(r.ups ?? 0)} | ${r.ok ? 'ok' : 'failed'} | ${r.missed ?? '-'} | ${Math.round(r.connect ?? 0)} | ${f1(r.p50)} |`,
  );
say();
say(`A ${ELEMENTS.toLocaleString('en')}-element int64 array to c-pvxs (as fast as the server makes it, ${ARRAY_SAMPLES} updates)`);
say();
say('| server | M elements/s received | server M elements/s | skipped | repeated | corrupt |');
say('|---|---:|---:|---:|---:|---:|');
for (const r of arrayRows)
  say(
    `| ${r.name} | ${f1(r.mElementsPerSecond)} | ${f1(r.server?.mElementsPerSecond)} | ${r.skipped ?? '-'} | ${r.repeats ?? '-'} | ${r.corrupt ?? '-'} |`,
  );
say();
say(`${NAMES.toLocaleString('en')} PVs: a PVA snapshot of every one from a fresh server (60 s timeout each)`);
say();
say('| client | server | answered | wall s | server CPU s | server peak RSS MB |');
say('|---|---|---:|---:|---:|---:|');
for (const r of snapshotRows)
  say(`| ${r.client} | ${r.server} | ${r.answered} | ${f1(r.wallMs / 1000)} | ${f1(r.cpuS)} | ${Math.round(r.peakMb)} |`);
say();
say(`${CLIENTS} clients (this client's Contexts in one process, a circuit each) monitoring ${PER_CLIENT} counters each, ${MANY_S} s`);
say();
say(
  '| rate Hz | server | monitors with updates | connected in s | updates received | expected | gaps | server CPU % | server peak RSS MB |',
);
say('|---:|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of manyRows)
  say(
    `| ${r.rate} | ${r.server} | ${r.connected} | ${f1(r.connectS)} | ${r.got} | ${r.expected} | ${r.gaps} | ${f1(r.cpu)} | ${Math.round(r.peakMb)} |`,
  );
process.stdout.write(lines.join('\n') + '\n');
process.exit(0);
