// What Secure PV Access costs: the same workloads over plain TCP and over TLS, this client beside
// Phoebus core-pva's client (java/src/epicsperf/TlsClient.java), on one core-pva server
// (TlsServer.java, serving both, its keychain made by keytool; the clients' keychain holds the
// authority only, the "ca" identity):
//
//   monitor  1000 counters at 10 Hz (every update checked: each value the last + 1)
//   array    one int64 array of ELEMENTS published as fast as the server can (first, middle and
//            last element checked); the server's EPICS_PVA_SEND_BUFFER_SIZE is raised to hold one
//            update (core-pva drops an update larger than it, 8,001,000 bytes by default)
//
// Each client runs in its own process; its CPU (all threads) is read from /proc over SECONDS after
// a WARM-second warm-up. Rounds alternate the clients and the transports.
//
// The server's CPU (all threads, and its busiest thread) is read over the same window.
//
//   node benchmarks/tls-cost.mjs [seconds] [rounds] [elements]     (defaults 10, 2, 10000000)
//   (after npm run build -w epicsperf-testkit: the test keychains, and the packages it builds on)
//   benchmarks/tls-cost.sh                                           (records benchmarks/results/tls-cost.md)
//
// With --perf, where this client's CPU goes in the monitor workload over TCP and over TLS: `perf
// record` (cpu-clock) of the client process over the measured window, node with
// --perf-basic-prof, the samples sorted by where they fall (OpenSSL, Node's streams and TLS, the
// library's JavaScript, V8, libc, the kernel), as % of a core.
//
//   node benchmarks/tls-cost.mjs --perf [seconds] [rounds]          (defaults 20, 2)
//   benchmarks/tls-perf.sh                                           (records benchmarks/results/tls-perf.md)
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WARM = 2;
const COUNTERS = 1000;
const PREFIX = 'B:';
const dist = (p) => new URL(`../packages/${p}`, import.meta.url).href;

/** This client's side, in a process of its own: the same prints as TlsClient.java. */
async function one(workload, seconds) {
  const { Context } = await import(dist('client/dist/index.js'));
  const ctx = new Context({ protocol: 'pva' });
  const array = workload === 'array';
  const n = array ? 1 : COUNTERS;
  let updates = 0;
  let gaps = 0;
  let elements = 0;
  let started = 0;
  const last = new Float64Array(n);
  const seen = new Uint8Array(n);
  let ready;
  const all = new Promise((r) => (ready = r));
  for (let i = 0; i < n; i++) {
    const name = array ? `${PREFIX}ARRAY` : `${PREFIX}C${i + 1}`;
    ctx.monitor(name, { request: 'field(value,alarm,timeStamp)', reuseArrays: array }, (e) => {
      if (e.kind !== 'update') return;
      const v = e.value;
      if (array) {
        if (v.length === 0 || v[0] !== v[v.length >> 1] || v[0] !== v[v.length - 1]) gaps++;
        elements += v.length;
      } else {
        if (seen[i] && v !== last[i] + 1) gaps++;
        last[i] = v;
      }
      if (!seen[i]) {
        seen[i] = 1;
        if (++started === n) ready();
      }
      updates++;
    });
  }
  await all;
  console.log('ready');
  await new Promise((r) => setTimeout(r, WARM * 1000));
  console.log(`mark ${updates} ${elements}`);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  console.log(`end ${updates} ${elements} ${gaps}`);
  process.exit(0);
}

/** CPU seconds of process `pid` (all threads) from /proc. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** CPU seconds of each thread of process `pid`, by thread id. */
function threadSeconds(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(tid, cpuSeconds(`${pid}/task/${tid}`));
    } catch {} // a thread that ended
  }
  return out;
}

/** The server's CPU % over a window (all threads) and its busiest thread's. */
function serverLoad(before, after, s) {
  let all = 0;
  let top = 0;
  for (const [tid, t] of after) {
    const d = t - (before.get(tid) ?? 0);
    all += d;
    top = Math.max(top, d);
  }
  return { serverPct: (100 * all) / s, serverThreadPct: (100 * top) / s };
}

/** Where perf's samples fall, first match wins (symbols of `perf report --sort dso,sym`). */
const PLACES = [
  [
    'OpenSSL',
    (_dso, sym) => /^(ssl|tls1|tls13|aes|gcm|EVP_|CRYPTO_|OPENSSL|BIO_|ossl|ERR_|OBJ_|WPACKET|PACKET|RECORD_LAYER|bn_|sha)/i.test(sym),
  ],
  ["Node's TLS and stream C++", (_dso, sym) => /node::/.test(sym)],
  ["Node's stream JavaScript", (_dso, sym) => /^JS:.*node:/.test(sym)],
  ["the library's JavaScript", (_dso, sym) => /^JS:.*packages\/client/.test(sym)],
  ["the benchmark's callback", (_dso, sym) => /^JS:/.test(sym)],
  ['libc (malloc, memcpy, strcmp)', (dso) => /libc\.so/.test(dso)],
  ['kernel', (dso) => /kernel/.test(dso)],
  ['V8 (builtins, IC, GC, calls into JS)', () => true],
];

/** % of a core per place in perf data `file` of `seconds` sampled at `hz`. */
function places(file, seconds, hz) {
  const out = spawnSync('perf', ['report', '-i', file, '--sort', 'dso,sym', '--stdio', '-n'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const sums = new Map(PLACES.map(([name]) => [name, 0]));
  for (const line of out.stdout.split('\n')) {
    const m = /^\s+[\d.]+%\s+(\d+)\s+(.+?)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const [name] = PLACES.find(([, test]) => test(m[2], m[3].trim()));
    sums.set(name, sums.get(name) + Number(m[1]));
  }
  return new Map([...sums].map(([k, n]) => [k, (100 * n) / (seconds * hz)]));
}

const PERF_HZ = 4999;

/** Run one client process; its CPU % and rates over the measured window, and the server's CPU; `perfFile`: recorded over the window. */
function measure(label, command, args, env, seconds, serverPid, perfFile) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let mark;
    let perfDone; // perf record's exit, once it has written its file
    let ended = false;
    const killer = setTimeout(() => child.kill('SIGKILL'), (WARM + seconds + 60) * 1000);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out += d;
      for (;;) {
        const nl = out.indexOf('\n');
        if (nl < 0) break;
        const [what, ...nums] = out.slice(0, nl).trim().split(' ');
        out = out.slice(nl + 1);
        if (what === 'mark')
          mark = {
            cpu: cpuSeconds(child.pid),
            server: threadSeconds(serverPid),
            t: performance.now(),
            updates: Number(nums[0]),
            elements: Number(nums[1]),
          };
        if (what === 'mark' && perfFile) {
          const args = ['record', '-q', '-e', 'cpu-clock', '-F', String(PERF_HZ), '-p', String(child.pid), '-o', perfFile];
          const perf = spawn('perf', [...args, '--', 'sleep', String(seconds)], { stdio: 'ignore' });
          perfDone = new Promise((resolve) => perf.once('exit', resolve));
        }
        if (what === 'end' && mark) {
          const s = (performance.now() - mark.t) / 1000;
          const cpu = cpuSeconds(child.pid) - mark.cpu;
          const figures = {
            cpuPct: (100 * cpu) / s,
            updatesPerS: (Number(nums[0]) - mark.updates) / s,
            melPerS: (Number(nums[1]) - mark.elements) / s / 1e6,
            gaps: Number(nums[2]),
            ...serverLoad(mark.server, threadSeconds(serverPid), s),
          };
          ended = true;
          Promise.resolve(perfDone).then(() => resolve(figures));
        }
      }
    });
    child.on('exit', (code) => {
      clearTimeout(killer);
      if (!ended) reject(new Error(`${label} exited ${code} before its figures: ${err.trim().split('\n').slice(-2).join(' | ')}`));
    });
  });
}

async function main(seconds, rounds, arrayElements, perf = false) {
  const { makeKeychains, KEYCHAIN_PASSWORD } = await import(dist('testkit/dist/keychains.js'));
  const { buildJavaRunners, javaRunnerCommand } = await import(dist('epicsperf/dist/toolchains/jvm.js'));
  const { freePort } = await import(dist('epicsperf/dist/ioc/ports.js'));
  const built = await buildJavaRunners();
  if ('error' in built) throw new Error(`the Java runners cannot be built: ${built.error}`);
  const dir = mkdtempSync(join(tmpdir(), 'tls-cost-'));
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  try {
    const kc = makeKeychains(dir);
    for (const workload of perf ? ['monitor'] : ['monitor', 'array']) {
      const udp = await freePort({ udp: true, tcp: false });
      const tcp = await freePort({ udp: false, tcp: true }, new Set([udp]));
      const tls = await freePort({ udp: false, tcp: true }, new Set([udp, tcp]));
      const server = javaRunnerCommand('epicsperf.TlsServer');
      const serverArgs = [PREFIX, String(workload === 'monitor' ? COUNTERS : 0), String(workload === 'array' ? arrayElements : 0)];
      const srv = spawn(server.command, [...server.args, ...serverArgs], {
        env: {
          ...process.env,
          EPICS_PVA_SERVER_PORT: String(tcp),
          EPICS_PVAS_TLS_PORT: String(tls),
          EPICS_PVAS_BROADCAST_PORT: String(udp),
          EPICS_PVAS_TLS_KEYCHAIN: `${kc.server};${KEYCHAIN_PASSWORD}`,
          // core-pva's server sends an update whole from a buffer of this size (8,001,000 bytes by
          // default): a larger array is dropped, so it holds one update here.
          ...(workload === 'array' ? { EPICS_PVA_SEND_BUFFER_SIZE: String(8 * arrayElements + 1_000_000) } : {}),
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      // (core-pva logs a warning for each update it skips for a client still sending the last one)
      let srvErr = '';
      srv.stderr.on('data', (d) => (srvErr = (srvErr + d).slice(-2000)));
      await new Promise((resolve, reject) => {
        srv.stdout.on('data', (d) => /ready/.test(String(d)) && resolve());
        srv.once('exit', (code) => reject(new Error(`TlsServer exited ${code}: ${srvErr.trim().split('\n').slice(-2).join(' | ')}`)));
      });
      try {
        for (let r = 0; r < rounds; r++) {
          for (const client of perf ? ['node'] : ['node', 'core-pva']) {
            for (const transport of ['tcp', 'tls']) {
              const env = {
                ...process.env,
                EPICS_PVA_ADDR_LIST: `127.0.0.1:${udp}`,
                EPICS_PVA_AUTO_ADDR_LIST: 'NO',
                EPICS_PVA_BROADCAST_PORT: String(udp),
                EPICS_PVA_TLS_KEYCHAIN: transport === 'tls' ? `${kc.trust};${KEYCHAIN_PASSWORD}` : '',
              };
              const java = javaRunnerCommand('epicsperf.TlsClient');
              const [command, args] =
                client === 'node'
                  ? [process.execPath, [...(perf ? ['--perf-basic-prof'] : []), self, '--one', workload, String(seconds)]]
                  : [
                      java.command,
                      [
                        ...java.args,
                        workload,
                        PREFIX,
                        ...(workload === 'monitor' ? [String(COUNTERS)] : []),
                        String(WARM),
                        String(seconds),
                      ],
                    ];
              const label = `${client} over ${transport} (${workload})`;
              const perfFile = perf ? join(dir, `${transport}-${r}.perf`) : undefined;
              const row = { workload, client, transport, ...(await measure(label, command, args, env, seconds, srv.pid, perfFile)) };
              if (perfFile) row.places = places(perfFile, seconds, PERF_HZ);
              rows.push(row);
            }
          }
        }
      } finally {
        srv.stdin.end();
        srv.kill();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (perf) perfReport(rows, seconds, rounds);
  else report(rows, seconds, rounds, arrayElements);
}

function perfReport(rows, seconds, rounds) {
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const of = (t) => rows.filter((r) => r.transport === t);
  console.log(
    `Where this client's CPU goes, monitor of ${COUNTERS} counters at 10 Hz on one core-pva 5.0.5 server (TlsServer), over TCP and TLS: perf record (cpu-clock, ${PERF_HZ} Hz) of the client over ${seconds} s after ${WARM} s, ${rounds} rounds, median; % of a core\n`,
  );
  console.log('| where | TCP | TLS | TLS - TCP |');
  console.log('|---|---:|---:|---:|');
  const total = (t) => med(of(t).map((r) => [...r.places.values()].reduce((a, b) => a + b, 0)));
  for (const [name] of PLACES) {
    const [a, b] = ['tcp', 'tls'].map((t) => med(of(t).map((r) => r.places.get(name))));
    console.log(`| ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b - a).toFixed(2)} |`);
  }
  const [a, b] = [total('tcp'), total('tls')];
  console.log(`| all samples | ${a.toFixed(2)} | ${b.toFixed(2)} | ${(b - a).toFixed(2)} |`);
  console.log(
    `| CPU from /proc | ${med(of('tcp').map((r) => r.cpuPct)).toFixed(2)} | ${med(of('tls').map((r) => r.cpuPct)).toFixed(2)} | |`,
  );
  console.log('');
}

function report(rows, seconds, rounds, arrayElements) {
  const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cell = (xs, d) =>
    xs.length > 1 ? `${med(xs).toFixed(d)} (${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)})` : xs[0].toFixed(d);
  const pick = (w, c, t) => rows.filter((r) => r.workload === w && r.client === c && r.transport === t);
  console.log(
    `Plain TCP against TLS on one core-pva 5.0.5 server (TlsServer; for the array EPICS_PVA_SEND_BUFFER_SIZE=${8 * arrayElements + 1_000_000} so that it can send it), ${rounds} rounds of ${seconds} s after ${WARM} s, each client in its own process; median (min-max)\n`,
  );
  for (const [w, title, rate] of [
    ['monitor', `Monitor of ${COUNTERS} counters at 10 Hz`, 'updates/s'],
    ['array', `Monitor of one array of ${arrayElements.toLocaleString('en')} int64 at the server's top rate`, 'M elements/s'],
  ]) {
    console.log(`${title}\n`);
    console.log(
      `| client | transport | CPU % of a core | ${rate} | gaps | TLS / TCP CPU | TLS / TCP rate | server CPU % | server's busiest thread % |`,
    );
    console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of ['node', 'core-pva']) {
      for (const t of ['tcp', 'tls']) {
        const rs = pick(w, c, t);
        if (!rs.length) continue;
        const value = (r) => (w === 'array' ? r.melPerS : r.updatesPerS);
        const base = pick(w, c, 'tcp');
        const ratio = (f) => (t === 'tls' && base.length ? (med(rs.map(f)) / med(base.map(f))).toFixed(2) : '');
        console.log(
          `| ${c === 'node' ? 'epics-client' : 'core-pva'} | ${t.toUpperCase()} | ${cell(
            rs.map((r) => r.cpuPct),
            2,
          )} | ${cell(rs.map(value), w === 'array' ? 1 : 0)} | ${rs.reduce((a, r) => a + r.gaps, 0)} | ${ratio((r) => r.cpuPct)} | ${ratio(value)} | ${cell(
            rs.map((r) => r.serverPct),
            0,
          )} | ${cell(
            rs.map((r) => r.serverThreadPct),
            0,
          )} |`,
        );
      }
    }
    console.log('');
  }
}

if (process.argv[2] === '--one') await one(process.argv[3], Number(process.argv[4]));
else if (process.argv[2] === '--perf') {
  if (spawnSync('perf', ['--version']).status !== 0) {
    console.error('tls-cost --perf: perf (Debian: linux-perf) is not installed');
    process.exit(1);
  }
  const [seconds = '20', rounds = '2'] = process.argv.slice(3);
  await main(Number(seconds), Number(rounds), 0, true);
} else {
  const [seconds = '10', rounds = '2', elements = '10000000'] = process.argv.slice(2);
  await main(Number(seconds), Number(rounds), Number(elements));
}
