// Where a monitor's memory goes: this client monitors PREFIX:CALC1..N of a running IOC over PV
// Access (or CA), waits for every first update and a few more, and takes a heap snapshot after a
// full GC; the heap's objects are summed by kind (V8's node type and constructor name) and shown
// in bytes per monitor, for each build (a dist directory) in a fresh process.
//
//   npx epicsperf ioc --records 10000 --rate 1 --array-elements 0 --write-env /tmp/ioc.env &
//   node benchmarks/pva-monitor-heap.mjs ENV_FILE [RECORDS] [PROTOCOL] [DIST ...]
//
// Defaults: 10000 records, pva, this checkout's packages/client/dist. Prints the heap per monitor
// of each build and its 12 largest kinds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeHeapSnapshot } from 'node:v8';
import { loadIocEnv } from './ioc-env.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROWS = 12;

async function one(envFile, records, protocol, dist) {
  loadIocEnv(envFile);
  const { Context } = await import(`${dist}/index.js`);
  const prefix = process.env.EPICSPERF_PREFIX ?? 'TEST:';
  const ctx = new Context({ protocol });
  const seen = new Uint8Array(records);
  let first = 0;
  await new Promise((res) => {
    for (let i = 0; i < records; i++)
      ctx.monitor(`${prefix}CALC${i + 1}`, protocol === 'pva' ? { request: 'field(value,alarm,timeStamp)' } : {}, (e) => {
        if (e.kind === 'update' && !seen[i]) {
          seen[i] = 1;
          if (++first === records) res();
        }
      });
  });
  await new Promise((r) => setTimeout(r, 3000));
  globalThis.gc();
  const dir = mkdtempSync(join(tmpdir(), 'epicsperf-heap-'));
  const snap = JSON.parse(readFileSync(writeHeapSnapshot(join(dir, 'h.heapsnapshot')), 'utf8'));
  rmSync(dir, { recursive: true, force: true });
  const meta = snap.snapshot.meta;
  const nf = meta.node_fields.length;
  const [iType, iName, iSize] = ['type', 'name', 'self_size'].map((f) => meta.node_fields.indexOf(f));
  const types = meta.node_types[0];
  const kinds = new Map();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += nf) {
    const type = types[snap.nodes[i + iType]];
    const name = type.includes('string') ? '(strings)' : type === 'number' ? '(numbers)' : snap.strings[snap.nodes[i + iName]];
    const key = `${type} ${name || '(internal)'}`.slice(0, 60);
    const size = snap.nodes[i + iSize];
    const k = kinds.get(key) ?? { count: 0, bytes: 0 };
    k.count++;
    k.bytes += size;
    kinds.set(key, k);
    total += size;
  }
  const top = [...kinds].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, ROWS);
  console.log(JSON.stringify({ total, top }));
  process.exit(0);
}

function main(envFile, records, protocol, dists) {
  const self = fileURLToPath(import.meta.url);
  console.log(
    `${records.toLocaleString('en-US')} ${protocol === 'pva' ? 'PV Access' : 'CA'} monitors, every one updated, after a full GC\n`,
  );
  for (const dist of dists) {
    const res = spawnSync(process.execPath, ['--expose-gc', self, '--one', envFile, String(records), protocol, dist], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    const commit = spawnSync('git', ['-C', dist, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).stdout.trim() || '?';
    if (res.status !== 0) {
      console.log(`${commit}: failed: ${res.stderr.trim().split('\n').pop()}\n`);
      continue;
    }
    const r = JSON.parse(res.stdout.trim().split('\n').pop());
    console.log(`**${commit}: ${Math.round(r.total / records)} bytes of heap per monitor**\n`);
    console.log('| kind (V8 node type, constructor) | objects per monitor | bytes per monitor |');
    console.log('|---|---:|---:|');
    for (const [key, k] of r.top) console.log(`| ${key} | ${(k.count / records).toFixed(2)} | ${Math.round(k.bytes / records)} |`);
    console.log('');
  }
}

if (process.argv[2] === '--one') {
  const [, , , envFile, records, protocol, dist] = process.argv;
  await one(envFile, Number(records), protocol, dist);
} else {
  const [envFile, recordsArg = '10000', protocol = 'pva', ...dists] = process.argv.slice(2);
  const records = Number(recordsArg);
  if (!envFile || !(records > 0) || (protocol !== 'ca' && protocol !== 'pva')) {
    console.error('usage: node benchmarks/pva-monitor-heap.mjs ENV_FILE [RECORDS] [ca|pva] [DIST ...]');
    process.exit(2);
  }
  main(envFile, records, protocol, dists.length ? dists.map((d) => resolve(d)) : [resolve(HERE, '../packages/client/dist')]);
}
