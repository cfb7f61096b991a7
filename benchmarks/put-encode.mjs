// Encode cost of a put's payload (encodePut: checks and DBR bytes) for one or more builds of the
// library given as dist/ folders, interleaved in one run so their ratio survives a noisy machine:
//   node benchmarks/put-encode.mjs packages/client/dist /path/to/other/packages/client/dist
// Prints ms per encode (checks, DBR bytes and the WRITE_NOTIFY message they go out in; median of
// 9 rounds) of 1 MB of bytes to a CHAR channel and of 125,000 doubles.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dirs = process.argv.slice(2);
if (dirs.length === 0) dirs.push('packages/client/dist');
const builds = [];
for (const d of dirs) {
  const m = await import(pathToFileURL(resolve(d, 'client/convert.js')).href);
  const msg = await import(pathToFileURL(resolve(d, 'ca/messages.js')).href);
  const w = await import(pathToFileURL(resolve(d, 'ca/writer.js')).href);
  builds.push({ dir: d, encodePut: m.encodePut, encodeMessage: msg.encodeMessage, ByteWriter: w.ByteWriter });
}

const N = 1_000_000;
const channel = (nativeType) => ({ name: 'BENCH', nativeType, nativeCount: 0 });
const cases = [
  { name: 'Uint8Array[1e6] -> CHAR', ch: channel(4), value: new Uint8Array(N).fill(7) },
  { name: 'Buffer[1e6] -> CHAR', ch: channel(4), value: Buffer.alloc(N, 7) },
  { name: 'Int8Array[1e6] -> CHAR', ch: channel(4), value: new Int8Array(N).fill(-3) },
  { name: 'Float64Array[125000] -> DOUBLE', ch: channel(6), value: new Float64Array(N / 8).fill(1.5) },
];

function once(b, c) {
  const t0 = process.hrtime.bigint();
  const out = b.encodePut(c.ch, c.value);
  const writer = new b.ByteWriter();
  b.encodeMessage(writer, { type: 'WriteNotifyRequest', dataType: out.dbrType, count: out.count, sid: 1, ioid: 1, payload: out.payload });
  const bytes = writer.take();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (out.count !== c.value.length || bytes.length < 24 + c.value.byteLength) throw new Error(`${b.dir}: ${c.name}: count ${out.count}`);
  return ms;
}

for (const c of cases) {
  const times = builds.map(() => []);
  for (let r = 0; r < 9; r++) {
    // Alternate the order of the builds between rounds (the first after another's garbage pays for it).
    const order = builds.map((b, i) => [b, i]);
    if (r % 2) order.reverse();
    order.forEach(([b, i]) => {
      try {
        times[i].push(once(b, c));
      } catch (e) {
        times[i].push(NaN);
        if (r === 0) console.error(`${b.dir}: ${c.name}: ${e.message}`);
      }
    });
  }
  const med = times.map((t) => t.sort((a, b) => a - b)[4]);
  console.log(
    `${c.name.padEnd(32)} ${builds.map((b, i) => `${b.dir}: ${med[i].toFixed(3)} ms`).join('   ')}` +
      (builds.length > 1 ? `   ratio ${(med[1] / med[0]).toFixed(1)}x` : ''),
  );
}
