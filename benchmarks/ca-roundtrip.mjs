// Where this client's CA round trip goes: a put of one double and the client's own monitor update
// of it (the latency workload at 1 element), timed three ways in fresh processes taken in turn:
//
//   raw     a minimal Channel Access exchange written on node:net (VERSION, CREATE_CHAN,
//           EVENT_ADD, then WRITE and wait for the update): Node's own floor on this host;
//   lib     epics-client's Context: put(wait: false) and its monitor callback, as the
//           latency workload's node runner does; then the same put warm, in a loop of puts;
//   phases  the same with timestamps at put(), at the write's scheduling, at the flush, at the
//           socket write, at the read and at the monitor callback (node:net's connect and the
//           connection's scheduleFlush and flush wrapped to take them; a little slower than lib).
//
//   benchmarks/ca-roundtrip.sh                       (starts the IOC, records benchmarks/results/ca-roundtrip*.md)
//   node benchmarks/ca-roundtrip.mjs ENV_FILE [processes] [rounds]   (an IOC started with --latency-elements)
//   node benchmarks/ca-roundtrip.mjs ENV_FILE processes rounds DIST_A DIST_B
//           (two builds of the library, each a client's dist directory: raw, A and B in turn)
//
// Prints the median over the processes of each process's p50 (µs), with min-max.
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const MODES = { raw, lib, phases };
const WARMUP = 300;
const now = () => Number(process.hrtime.bigint()) / 1e3; // µs

function median(xs) {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** Values that differ from one round to the next, so that each update is told from the last. */
const roundValue = (i) => (i % 250) + 1 + 1000 * (i & 1);

/** The put-and-update loop: `put(v)` sends, `arm(v)` returns a promise of the update holding v. */
async function loop(rounds, arm, put, sample) {
  for (let i = -WARMUP; i < rounds; i++) {
    const v = roundValue(i);
    const got = arm(v);
    const t0 = now();
    await put(v);
    const t = await got;
    if (i >= 0) sample(t0, t);
  }
}

// ---- a minimal CA client on node:net --------------------------------------------------------

function header(cmd, size, type, count, p1, p2) {
  const b = Buffer.alloc(16);
  b.writeUInt16BE(cmd, 0);
  b.writeUInt16BE(size, 2);
  b.writeUInt16BE(type, 4);
  b.writeUInt16BE(count, 6);
  b.writeUInt32BE(p1, 8);
  b.writeUInt32BE(p2, 12);
  return b;
}

function padded(s) {
  const b = Buffer.alloc(Math.ceil((s.length + 1) / 8) * 8);
  b.write(s);
  return b;
}

async function raw(pv, rounds) {
  const [VERSION, EVENT_ADD, WRITE, CREATE_CHAN, CLIENT_NAME, HOST_NAME] = [0, 1, 4, 18, 20, 21];
  const DBR_DOUBLE = 6;
  const sock = net.connect({ port: Number(process.env.EPICS_CA_SERVER_PORT), host: '127.0.0.1', noDelay: true });
  await new Promise((resolve, reject) => sock.once('connect', resolve).once('error', reject));
  const me = padded('ca-roundtrip');
  const name = padded(pv);
  sock.write(
    Buffer.concat([
      header(VERSION, 0, 0, 13, 0, 0),
      header(HOST_NAME, me.length, 0, 0, 0, 0),
      me,
      header(CLIENT_NAME, me.length, 0, 0, 0, 0),
      me,
      header(CREATE_CHAN, name.length, 0, 0, 1, 13),
      name,
    ]),
  );
  let sid = 0;
  let waiting;
  let subscribed;
  const first = new Promise((resolve) => (subscribed = resolve));
  let pending = Buffer.alloc(0);
  sock.on('data', (d) => {
    pending = pending.length ? Buffer.concat([pending, d]) : d;
    while (pending.length >= 16) {
      const size = pending.readUInt16BE(2);
      if (pending.length < 16 + size) break;
      const cmd = pending.readUInt16BE(0);
      if (cmd === CREATE_CHAN) {
        sid = pending.readUInt32BE(12);
        const mask = Buffer.alloc(16);
        mask.writeUInt16BE(5, 12); // DBE_VALUE | DBE_ALARM
        sock.write(Buffer.concat([header(EVENT_ADD, 16, DBR_DOUBLE, 1, sid, 1), mask]));
      } else if (cmd === EVENT_ADD) {
        subscribed();
        const w = waiting;
        if (w && pending.readDoubleBE(16) === w.v) {
          waiting = undefined;
          w.resolve(now());
        }
      }
      pending = pending.subarray(16 + size);
    }
  });
  await first;
  const total = [];
  await loop(
    rounds,
    (v) => new Promise((resolve) => (waiting = { v, resolve })),
    (v) => {
      const m = Buffer.alloc(24);
      header(WRITE, 8, DBR_DOUBLE, 1, sid, 0).copy(m);
      m.writeDoubleBE(v, 16);
      sock.write(m);
    },
    (t0) => total.push(now() - t0),
  );
  sock.destroy();
  return { total };
}

// ---- epics-client ---------------------------------------------------------------------------

/** The library's entry point: a build's dist directory (CLIENT_DIST), else the package. */
const entry = () => (process.env.CLIENT_DIST ? `${resolve(process.env.CLIENT_DIST)}/index.js` : 'epics-client');

async function lib(pv, rounds, marks) {
  const { Context } = await import(entry());
  const ctx = new Context();
  let waiting;
  let subscribed;
  const first = new Promise((resolve) => (subscribed = resolve));
  const m = ctx.monitor(pv, {}, (e) => {
    if (e.kind !== 'update') return;
    subscribed();
    const w = waiting;
    const v = typeof e.value === 'number' ? e.value : e.value[0];
    if (w && v === w.v) {
      waiting = undefined;
      w.resolve(now());
    }
  });
  await first;
  const value = new Float64Array(1);
  const out = { total: [] };
  await loop(
    rounds,
    (v) => new Promise((resolve) => (waiting = { v, resolve })),
    (v) => {
      value[0] = v;
      return ctx.put(pv, value, { wait: false });
    },
    (t0, callback) => {
      out.total.push(now() - t0);
      if (!marks) return;
      const { scheduled, flushed, written, read } = marks;
      for (const [k, x] of Object.entries({
        'put() to the write scheduled': scheduled - t0,
        'to the flush': flushed - scheduled,
        'to the socket write': written - flushed,
        'socket write to read (kernel, IOC, wake-up)': read - written,
        'read to the monitor callback': callback - read,
      }))
        (out[k] ??= []).push(x);
    },
  );
  if (!marks) {
    // The same put warm: a loop of puts with no wait between them.
    const n = 20_000;
    for (let rep = 0; rep < 3; rep++) {
      const t0 = now();
      const puts = [];
      for (let i = 0; i < n; i++) puts.push(ctx.put(pv, value, { wait: false }));
      (out.warm ??= []).push((now() - t0) / n);
      await Promise.all(puts);
    }
  }
  m.close();
  ctx.close();
  return out;
}

/** lib with timestamps: node:net's connect and the connection's flush wrapped before the library runs. */
async function phases(pv, rounds) {
  const marks = { scheduled: 0, flushed: 0, written: 0, read: 0 };
  const { StreamConnection } = await import(new URL('transport/stream.js', import.meta.resolve(entry())).href);
  const { scheduleFlush, flush } = StreamConnection.prototype;
  StreamConnection.prototype.scheduleFlush = function (...args) {
    if (!this.flushScheduled) marks.scheduled = now();
    return scheduleFlush.apply(this, args);
  };
  StreamConnection.prototype.flush = function (...args) {
    marks.flushed = now();
    return flush.apply(this, args);
  };
  const connect = net.connect;
  net.connect = (opts, ...rest) => {
    const cb = opts.onread?.callback;
    if (cb)
      opts.onread.callback = (n, buf) => {
        marks.read = now();
        return cb(n, buf);
      };
    const s = connect(opts, ...rest);
    const write = s.write;
    s.write = (...args) => {
      marks.written = now();
      return write.apply(s, args);
    };
    return s;
  };
  return lib(pv, rounds, marks);
}

function main(envFile, processes, rounds, dists) {
  const self = fileURLToPath(import.meta.url);
  if (dists) return ab(self, envFile, processes, rounds, dists);
  const rows = { raw: [], lib: [], phases: [] };
  for (let i = 0; i < processes; i++) {
    for (const mode of Object.keys(rows)) {
      const r = spawnSync(process.execPath, [self, '--one', mode, envFile, rounds], { encoding: 'utf8' });
      try {
        rows[mode].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      } catch {
        console.error(`a ${mode} run failed: ${r.stderr.split('\n').find((l) => /Error/.test(l)) ?? r.stderr.trim()}`);
      }
    }
  }
  const cell = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
  console.log(
    `A put of one double and the client's own monitor update of it, ${rounds} rounds per process after ${WARMUP} not kept, ${processes} processes of each in turn\n`,
  );
  console.log('| client | round trip p50 µs |');
  console.log('|---|---:|');
  console.log(`| CA on node:net, nothing else | ${cell(rows.raw.map((r) => r.total))} |`);
  console.log(`| epics-client | ${cell(rows.lib.map((r) => r.total))} |`);
  console.log(`\n| epics-client, warm | µs |\n|---|---:|\n| a put() in a loop of 20,000 | ${cell(rows.lib.map((r) => r.warm))} |`);
  console.log(`\nWhere epics-client's round trip goes (the phases run, its total ${cell(rows.phases.map((r) => r.total))} µs)\n`);
  console.log('| phase | p50 µs |');
  console.log('|---|---:|');
  for (const k of Object.keys(rows.phases[0] ?? {}).filter((k) => k !== 'total'))
    console.log(`| ${k} | ${cell(rows.phases.map((r) => r[k]))} |`);
}

/** Two builds in turn (raw, A, B per process round): the round trip and the warm put of each. */
function ab(self, envFile, processes, rounds, dists) {
  const rows = { raw: [], A: [], B: [] };
  for (let i = 0; i < processes; i++) {
    for (const k of Object.keys(rows)) {
      const env = k === 'raw' ? process.env : { ...process.env, CLIENT_DIST: dists[k === 'A' ? 0 : 1] };
      const r = spawnSync(process.execPath, [self, '--one', k === 'raw' ? 'raw' : 'lib', envFile, rounds], { encoding: 'utf8', env });
      try {
        rows[k].push(JSON.parse(r.stdout.trim().split('\n').pop()));
      } catch {
        console.error(`a ${k} run failed: ${r.stderr.trim()}`);
      }
    }
  }
  const cell = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}-${Math.max(...xs).toFixed(1)})`;
  console.log(
    `${rounds} rounds per process after ${WARMUP} not kept, ${processes} processes of each in turn; A ${dists[0]}, B ${dists[1]}\n`,
  );
  console.log('| | round trip p50 µs | a put() in a loop of 20,000, µs |');
  console.log('|---|---:|---:|');
  console.log(`| CA on node:net | ${cell(rows.raw.map((r) => r.total))} | |`);
  for (const k of ['A', 'B']) console.log(`| ${k} | ${cell(rows[k].map((r) => r.total))} | ${cell(rows[k].map((r) => r.warm))} |`);
}

if (process.argv[2] === '--one') {
  const [, , , mode, envFile, rounds] = process.argv;
  loadIocEnv(envFile);
  const parts = await MODES[mode](`${process.env.EPICSPERF_PREFIX ?? 'TEST:'}LATENCY:DOUBLE`, Number(rounds));
  console.log(JSON.stringify(Object.fromEntries(Object.entries(parts).map(([k, xs]) => [k, median(xs)]))));
  process.exit(0);
} else {
  const [envFile, processes = '7', rounds = '2000', distA, distB] = process.argv.slice(2);
  if (!envFile || (distA && !distB)) {
    console.error('usage: node benchmarks/ca-roundtrip.mjs ENV_FILE [PROCESSES] [ROUNDS] [DIST_A DIST_B]');
    process.exit(2);
  }
  main(envFile, Number(processes), rounds, distA ? [distA, distB] : undefined);
}
