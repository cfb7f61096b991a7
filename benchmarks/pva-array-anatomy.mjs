// Where the time and the memory go when a client monitors a large array over PV Access: each
// client in turn (builds of this client, and pvapy), ROUNDS rounds of SECONDS, alternating, on a
// running IOC; a line per run as it ends (stderr), then a Markdown table of them all. Start the IOC first:
//
//   npx epicsperf ioc --records 1 --array-elements 10000000 --array-type int64 --array-rate max --write-env /tmp/ioc.env &
//   node benchmarks/pva-array-anatomy.mjs /tmp/ioc.env [rounds] [seconds] NAME=DIST_DIR|pvapy=PYTHON ...
//
// e.g. `A=/tmp/before/packages/client/dist B=packages/client/dist pvapy=~/.cache/epicsperf/venv-*/bin/python`.
// A node client is the node-pva runner's monitor (field(value,alarm,timeStamp), reuseArrays); pvapy's
// is its runner's (channel.monitor with a callback). As root every client runs without
// CAP_SYS_NICE, as the bench's runners do (the IOC keeps it: its server threads run SCHED_FIFO).
//
// Per run, from the client: updates/s received, updates/s the IOC made (from the arrays' numbers),
// CPU % of a core, peak RSS, how long its threads ran and waited for a CPU (schedstat: % of the
// run); for a node build also the large buffers it allocated and its GCs (since it connected), and its
// socket reads (count, and the share of bytes read by reads of 1 MB and more). From the IOC: its CPU % by thread,
// and its end of the connection (ss -ti): segments retransmitted and found duplicate at the client
// (dsack_dups), and the time limited by the client's receive window or its own send buffer.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readIocEnv } from './ioc-env.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Each thread's name, run and runqueue wait (ns) of a process. */
function schedOf(pid) {
  const out = {};
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    try {
      const comm = readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim();
      const [run, wait] = readFileSync(`/proc/${pid}/task/${t}/schedstat`, 'utf8').split(' ').map(Number);
      const f = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
      out[t] = { comm, run, wait, cpu: Number(f[11]) + Number(f[12]) };
    } catch {}
  }
  return out;
}

/** Threads that ran at least 1% of `s` seconds: name -> [run %, wait %, CPU % from utime+stime]. */
function schedDiff(a, b, s) {
  const out = {};
  for (const [t, x] of Object.entries(b)) {
    const y = a[t];
    if (!y || x.run - y.run < s * 1e7) continue;
    const key = out[x.comm] ? `${x.comm}/${t}` : x.comm;
    out[key] = [(x.run - y.run) / 1e7 / s, (x.wait - y.wait) / 1e7 / s, (x.cpu - y.cpu) / s];
  }
  return out;
}

const hwmMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;

/** One node client for `seconds` after 1.5 s to settle: its figures as JSON. */
async function nodeClient(dist, seconds) {
  const { Context } = await import(`${dist}/index.js`);
  const { Framer } = await import(`${dist}/pva/framer.js`);
  const { BufferPool } = await import(`${dist}/transport/buffer-pool.js`);
  const { PerformanceObserver } = await import('node:perf_hooks');
  const m = { buffers: 0, reads: 0, bytes: 0, bigBytes: 0, gc: 0, gcMs: 0 };
  const commit = Framer.prototype.commitDirect;
  Framer.prototype.commitDirect = function (n) {
    m.reads++;
    m.bytes += n;
    if (n >= 1 << 20) m.bigBytes += n;
    return commit.call(this, n);
  };
  const push = Framer.prototype.push;
  Framer.prototype.push = function (c) {
    m.reads++;
    m.bytes += c.length;
    return push.call(this, c);
  };
  const take = BufferPool.prototype.take;
  BufferPool.prototype.take = function (size) {
    const free = this.free?.length;
    const b = take.call(this, size);
    if (this.free?.length === free) m.buffers++;
    return b;
  };
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) {
      m.gc++;
      m.gcMs += e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  const ctx = new Context({ protocol: 'pva' });
  const name = `${process.env.EPICSPERF_PREFIX ?? 'TEST:'}ARRAY`;
  let n = 0;
  let first, last, prev, t0, t1, c0, s0, m0;
  let repeats = 0;
  let torn = 0;
  const mon = ctx.monitor(name, { request: 'field(value,alarm,timeStamp)', reuseArrays: true }, (e) => {
    if (e.kind !== 'update') return;
    const v = e.value;
    const k = Number(v[0]);
    if (v[v.length >> 1] !== v[0] || v[v.length - 1] !== v[0]) torn++;
    if (k === prev) repeats++;
    prev = k;
    if (t0 === undefined) {
      if (performance.now() < 1500) return;
      [t0, first, c0, s0, m0] = [performance.now(), k, process.cpuUsage(), schedOf(process.pid), { ...m }];
      repeats = torn = 0;
      return;
    }
    n++;
    last = k;
    t1 = performance.now();
  });
  await sleep(1500 + seconds * 1000);
  const s = (t1 - t0) / 1000;
  const c = process.cpuUsage(c0);
  const threads = schedDiff(s0, schedOf(process.pid), s);
  mon.close();
  await ctx.close();
  return {
    got: n / s,
    made: (last - first) / s,
    cpu: (c.user + c.system) / 10 / (s * 1000),
    rssMb: hwmMb(),
    threads,
    buffers: m.buffers,
    reads: (m.reads - m0.reads) / s,
    mbPerRead: (m.bytes - m0.bytes) / (m.reads - m0.reads) / 1e6,
    bigReadShare: (m.bigBytes - m0.bigBytes) / (m.bytes - m0.bytes),
    gc: m.gc,
    gcMs: m.gcMs,
    repeats,
    torn,
  };
}

/** pvapy's monitor, as its runner opens it (packages/epicsperf/python/epicsperf_runners/runners/pvapy.py). */
const PVAPY = String.raw`
import json, os, sys, time
secs = float(sys.argv[1]); name = os.environ.get('EPICSPERF_PREFIX', 'TEST:') + 'ARRAY'
def sched():
    out = {}
    for t in os.listdir('/proc/self/task'):
        try:
            comm = open(f'/proc/self/task/{t}/comm').read().strip()
            run, wait = map(int, open(f'/proc/self/task/{t}/schedstat').read().split()[:2])
            f = open(f'/proc/self/task/{t}/stat').read().split(') ')[1].split()
            out[t] = (comm, run, wait, int(f[11]) + int(f[12]))
        except OSError: pass
    return out
import pvaccess as pva
st = {'n': 0, 't0': None, 'prev': None, 'repeats': 0, 'torn': 0}
T0 = time.time()
def on_update(pv):
    now = time.time(); v = pv['value']; k = int(v[0])
    pv['alarm']; pv['timeStamp']
    if v[len(v) >> 1] != v[0] or v[-1] != v[0]: st['torn'] += 1
    if k == st['prev']: st['repeats'] += 1
    st['prev'] = k
    if st['t0'] is None:
        if now - T0 > 1.5: st.update(t0=now, first=k, c0=os.times(), s0=sched(), repeats=0, torn=0)
        return
    st['n'] += 1; st['last'] = k; st['t1'] = now
ch = pva.Channel(name, pva.PVA)
ch.monitor(on_update, 'field(value,alarm,timeStamp)')
time.sleep(1.5 + secs)
c1 = os.times(); s1 = sched(); ch.stopMonitor()
s = st['t1'] - st['t0']; c0 = st['c0']
threads = {}
for t, (comm, run, wait, cpu) in s1.items():
    a = st['s0'].get(t)
    if a and run - a[1] >= s * 1e7: threads[comm if comm not in threads else f'{comm}/{t}'] = [(run - a[1]) / 1e7 / s, (wait - a[2]) / 1e7 / s, (cpu - a[3]) / s]
hwm = int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]) / 1024
print(json.dumps({'got': st['n'] / s, 'made': (st['last'] - st['first']) / s,
    'cpu': 100 * ((c1.user - c0.user) + (c1.system - c0.system)) / (c1.elapsed - c0.elapsed), 'rssMb': hwm,
    'threads': threads, 'repeats': st['repeats'], 'torn': st['torn']}))
sys.stdout.flush(); os._exit(0)
`;

/** The IOC's end of the client's connection: retransmissions and what limited its sending. */
function tcpOfIoc(port) {
  let text = '';
  try {
    text = execFileSync('ss', ['-tiH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  } catch {
    return {};
  }
  const num = (re) => Number(re.exec(text)?.[1] ?? 0);
  return {
    retrans: num(/retrans:\d+\/(\d+)/),
    dsack: num(/dsack_dups:(\d+)/),
    rwndLimited: num(/rwnd_limited:\d+ms\(([\d.]+)%\)/),
    sndbufLimited: num(/sndbuf_limited:\d+ms\(([\d.]+)%\)/),
  };
}

async function main() {
  const [envFile, rounds = '3', seconds = '8', ...specs] = process.argv.slice(2);
  if (!envFile || specs.length === 0) {
    console.error('usage: node benchmarks/pva-array-anatomy.mjs ENV_FILE [ROUNDS] [SECONDS] NAME=DIST_DIR|pvapy=PYTHON ...');
    process.exit(2);
  }
  const env = { ...process.env, ...readIocEnv(envFile) };
  const port = env.EPICS_PVA_SERVER_PORT;
  const iocPid = Number(execFileSync('pgrep', ['-f', `epicsperf_runners.ioc.* --pva-port ${port} `], { encoding: 'utf8' }).split('\n')[0]);
  const root = process.getuid?.() === 0 && spawnSync('setpriv', ['--bounding-set', '-sys_nice', '--', 'true']).status === 0;
  const prefix = root ? ['setpriv', '--bounding-set', '-sys_nice', '--'] : [];
  const self = fileURLToPath(import.meta.url);
  const rows = [];
  for (let r = 1; r <= Number(rounds); r++) {
    for (const spec of specs) {
      const [label, target] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
      const argv =
        label === 'pvapy'
          ? [target, '-c', PVAPY, seconds]
          : [process.execPath, self, '--one', fileURLToPath(new URL(target, `file://${process.cwd()}/`)), seconds];
      const i0 = schedOf(iocPid);
      const t0 = performance.now();
      // The IOC's end of the connection, sampled just before the client closes it (its counts are the connection's).
      let tcp = {};
      const sample = setTimeout(() => (tcp = tcpOfIoc(port)), (1.5 + Number(seconds) - 0.3) * 1000);
      const child = spawn(prefix[0] ?? argv[0], [...prefix.slice(1), ...(prefix.length ? argv : argv.slice(1))], { env });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (err += d));
      await new Promise((resolve) => child.on('close', resolve));
      clearTimeout(sample);
      const ioc = schedDiff(i0, schedOf(iocPid), (performance.now() - t0) / 1000);
      let row;
      try {
        row = JSON.parse(out.trim().split('\n').pop());
      } catch {
        console.log(`${label} round ${r}: failed: ${err.trim().split('\n').slice(-2).join(' ')}`);
        continue;
      }
      Object.assign(row, tcp);
      console.error(format(label, r, row, ioc));
      rows.push(markdownRow(label, r, row, ioc));
    }
  }
  console.log(
    `A monitor of pva://TEST:ARRAY (10,000,000 int64 from \`epicsperf ioc --array-rate max\`, QSRV) by each client in turn, ${rounds} rounds of ${seconds} s; one row per run. Run/wait: % of the run the client's busiest thread ran, and waited for a CPU; IOC TCP: the IOC's end of the connection (ss -ti)\n`,
  );
  console.log(
    '| client | round | updates/s got | updates/s the IOC made | CPU % | peak RSS MB | run/wait % | large buffers | reads/s (MB each) | GCs (ms) | IOC CPU % PVXTCP, qsrvSingle, python | IOC TCP: segments retransmitted (duplicate at the client) | limited by the receive window, the send buffer % | repeated, torn |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---|---:|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
}

function markdownRow(label, r, x, ioc) {
  const f = (v, d = 1) => (typeof v === 'number' && Number.isFinite(v) ? v.toFixed(d) : '-');
  const busiest = Object.values(x.threads ?? {}).sort((a, b) => b[0] - a[0])[0];
  const cpu = (name) => f(ioc[name]?.[2], 0);
  const node = x.buffers !== undefined;
  return `| ${label} | ${r} | ${f(x.got)} | ${f(x.made)} | ${f(x.cpu)} | ${f(x.rssMb, 0)} | ${busiest ? `${f(busiest[0], 0)}/${f(busiest[1], 0)}` : '-'} | ${node ? x.buffers : '-'} | ${node ? `${f(x.reads, 0)} (${f(x.mbPerRead, 2)})` : '-'} | ${node ? `${x.gc} (${f(x.gcMs, 0)})` : '-'} | ${cpu('PVXTCP')}, ${cpu('qsrvSingle')}, ${cpu('python')} | ${x.retrans ?? '-'} (${x.dsack ?? '-'}) | ${f(x.rwndLimited)}, ${f(x.sndbufLimited)} | ${x.repeats}, ${x.torn} |`;
}

function format(label, r, x, ioc) {
  const f = (v, d = 1) => (typeof v === 'number' ? v.toFixed(d) : '-');
  const th = Object.entries(x.threads ?? {})
    .map(([k, [run, wait]]) => `${k} ${f(run, 0)}/${f(wait, 0)}`)
    .join(', ');
  const iocThreads = Object.entries(ioc)
    .filter(([, [, , cpu]]) => cpu >= 3)
    .map(([k, [, , cpu]]) => `${k} ${f(cpu, 0)}`)
    .join(', ');
  const node =
    x.buffers === undefined
      ? ''
      : ` | buffers ${x.buffers}, reads/s ${f(x.reads, 0)} (${f(x.mbPerRead, 2)} MB each, ${f(100 * x.bigReadShare, 0)}% of bytes in reads >= 1 MB), GCs since connecting ${x.gc} (${f(x.gcMs, 0)} ms)`;
  return (
    `${label} r${r}: got ${f(x.got)}/s, IOC made ${f(x.made)}/s, CPU ${f(x.cpu)}%, peak RSS ${f(x.rssMb, 0)} MB, repeats ${x.repeats}, torn ${x.torn}` +
    ` | threads run/wait % ${th}${node} | IOC CPU % ${iocThreads}` +
    ` | IOC TCP: retrans ${x.retrans ?? '-'}, dsack ${x.dsack ?? '-'}, rwnd-limited ${f(x.rwndLimited)}%, sndbuf-limited ${f(x.sndbufLimited)}%`
  );
}

if (process.argv[2] === '--one') {
  const row = await nodeClient(process.argv[3], Number(process.argv[4]));
  console.log(JSON.stringify(row));
  process.exit(0);
} else await main();
