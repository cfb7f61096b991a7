// What one post costs in the Node server, by how long the server was idle before it: a server and
// one client (this library's, over CA and over PV Access) in this process, a double posted N times
// G ms apart, the time post() takes (to the point where the update is queued on the circuit) and
// the time to the socket write (the write reaching the socket's handle, past any cork); then the
// same posts back to back. Prints Markdown.
//
//   node benchmarks/server-post.mjs [N] [GAPS_MS] [DIST ...]     (default 200 posts, gaps 1,20)
//
// With DIST directories (builds of the library, e.g. packages/client/dist of a checkout of the
// commit before a change, and this one's), each is measured in a fresh process, in turn, three
// times, and each figure is the median of its three: an A/B in one session.
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROUNDS = 3;
const p50 = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const COLUMNS = '| protocol | gap before each post | post() µs (p50) | post to socket write µs (p50) |';
const cells = (r) => `${r.proto} | ${r.gap} | ${r.sync.toFixed(1)} | ${r.write === undefined ? '-' : r.write.toFixed(1)}`;

/** The rows of one build (its dist directory), measured in this process. */
async function measure(dist, N, GAPS) {
  const { Context } = await import(`${dist}/index.js`);
  const { DbrType } = await import(`${dist}/ca/index.js`);
  const { Server } = await import(`${dist}/server/index.js`);

  // The first write after a post to reach a socket's handle is the update leaving the server:
  // net.Socket's _writeGeneric, which both its write paths end in (write() itself only queues
  // while the socket is corked).
  let posted = 0;
  const toWrite = [];
  const writeGeneric = net.Socket.prototype._writeGeneric;
  if (typeof writeGeneric !== 'function') throw new Error(`this Node (${process.version}) has no net.Socket _writeGeneric to time`);
  net.Socket.prototype._writeGeneric = function (...a) {
    if (posted) toWrite.push(performance.now() - posted);
    posted = 0;
    return writeGeneric.apply(this, a);
  };

  const rows = [];
  for (const proto of ['CA', 'PVA']) {
    const s = await Server.start({
      ca: { port: 0, host: '127.0.0.1', beaconAddresses: [] },
      pva: { port: 0, udpPort: 0, host: '127.0.0.1', beaconAddresses: [] },
    });
    const pv = s.pv('D', { type: DbrType.DOUBLE, value: 0 });
    const env =
      proto === 'PVA'
        ? { EPICS_PVA_ADDR_LIST: '127.0.0.1', EPICS_PVA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_BROADCAST_PORT: String(s.pvaUdpPort) }
        : { EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_CA_SERVER_PORT: String(s.caPort) };
    const ctx = new Context({ env });
    let got = 0;
    const m = ctx.monitor(proto === 'PVA' ? 'pva://D' : 'D', {}, (e) => {
      if (e.kind === 'update') got++;
    });
    while (got === 0) await new Promise((r) => setTimeout(r, 10));
    let k = 0;
    for (const gap of GAPS) {
      const sync = [];
      toWrite.length = 0;
      for (let i = 0; i < N; i++) {
        await new Promise((r) => setTimeout(r, gap));
        const t = performance.now();
        posted = t;
        pv.post(++k);
        sync.push(performance.now() - t);
      }
      await new Promise((r) => setTimeout(r, 50));
      rows.push({ proto, gap: `${gap} ms`, sync: p50(sync) * 1000, write: p50(toWrite) * 1000 });
    }
    // Back to back, 100 posts a turn: the cost when the path stays hot.
    const n = 100 * N;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      pv.post(++k);
      if (i % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    rows.push({
      proto,
      gap: 'none (100 a turn; the client in this process too)',
      sync: ((performance.now() - t0) * 1000) / n,
      write: undefined,
    });
    m.close();
    await ctx.close();
    await s.close();
  }
  net.Socket.prototype._writeGeneric = writeGeneric;
  return rows;
}

const argv = process.argv.slice(2);
if (argv[0] === '--one') {
  // One build in this process (the A/B's child): its rows as JSON.
  const [, dist, n, gaps] = argv;
  console.log(JSON.stringify(await measure(dist, Number(n), gaps.split(',').map(Number))));
  process.exit(0);
}
const [nArg = '200', gapsArg = '1,20', ...dists] = argv;
const N = Number(nArg);
const GAPS = gapsArg.split(',').map(Number);
if (!(N > 0) || GAPS.some((g) => !(g >= 0))) {
  console.error('usage: node benchmarks/server-post.mjs [N] [GAPS_MS] [DIST ...]');
  process.exit(2);
}
if (!dists.length) {
  const rows = await measure(resolve(HERE, '../packages/client/dist'), N, GAPS);
  console.log(`A double posted ${N} times at each gap to one subscriber of this library's client, in one process\n`);
  console.log(COLUMNS);
  console.log('|---|---|---:|---:|');
  for (const r of rows) console.log(`| ${cells(r)} |`);
  process.exit(0);
}
const builds = dists.map((d) => resolve(d));
const runs = builds.map(() => []);
for (let round = 0; round < ROUNDS; round++)
  for (let b = 0; b < builds.length; b++) {
    const res = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--one', builds[b], String(N), GAPS.join(',')], {
      encoding: 'utf8',
    });
    if (res.status !== 0) {
      console.error(`${builds[b]}: ${res.stderr.trim().split('\n').slice(-3).join(' | ')}`);
      process.exit(1);
    }
    runs[b].push(JSON.parse(res.stdout.trim().split('\n').pop()));
  }
console.log(
  `A double posted ${N} times at each gap to one subscriber of this library's client, in one process; ${ROUNDS} processes of each build in turn, the median of their figures\n`,
);
console.log(`| build ${COLUMNS}`);
console.log('|---|---|---|---:|---:|');
for (const r of runs[0][0].keys())
  for (let b = 0; b < builds.length; b++) {
    const commit = spawnSync('git', ['-C', builds[b], 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
    const of = runs[b].map((rows) => rows[r]);
    const med = (k) => (of[0][k] === null || of[0][k] === undefined ? undefined : p50(of.map((x) => x[k])));
    console.log(`| ${commit} | ${cells({ ...of[0], sync: med('sync'), write: med('write') })} |`);
  }
