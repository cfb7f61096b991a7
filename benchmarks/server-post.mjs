// What one post costs in the Node server, by how long the server was idle before it: a server and
// one client (this library's, over CA and over PV Access) in this process, a double posted N times
// G ms apart, the time post() takes (to the point where the update is queued on the circuit) and
// the time to the socket write; then the same posts back to back. Prints Markdown.
//
//   node benchmarks/server-post.mjs [N] [GAPS_MS]      (default 200 posts, gaps 1,20)
import net from 'node:net';
import { Context } from '../packages/client/dist/index.js';
import { DbrType } from '../packages/client/dist/ca/index.js';
import { Server } from '../packages/client/dist/server/index.js';

const N = Number(process.argv[2] ?? 200);
const GAPS = (process.argv[3] ?? '1,20').split(',').map(Number);
const p50 = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

// The first socket write after a post is the update leaving the server.
let posted = 0;
const toWrite = [];
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (...a) {
  if (posted) toWrite.push(performance.now() - posted);
  posted = 0;
  return write.apply(this, a);
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
net.Socket.prototype.write = write;

console.log(`A double posted ${N} times at each gap to one subscriber of this library's client, in one process\n`);
console.log('| protocol | gap before each post | post() µs (p50) | post to socket write µs (p50) |');
console.log('|---|---|---:|---:|');
for (const r of rows) console.log(`| ${r.proto} | ${r.gap} | ${r.sync.toFixed(1)} | ${r.write === undefined ? '-' : r.write.toFixed(1)} |`);
process.exit(0);
