// Decode cost of a Reading per DBR form, for one or more builds of the library given as dist/
// folders, interleaved in one run so their ratio survives a noisy machine:
//   node benchmarks/decode-readings.mjs packages/client/dist /path/to/other/packages/client/dist
// Prints ns per decode (median of 7 rounds) for TIME_DOUBLE, CTRL_DOUBLE and a 1000-element TIME_DOUBLE array.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dirs = process.argv.slice(2);
if (dirs.length === 0) dirs.push('packages/client/dist');
const builds = [];
for (const d of dirs) {
  const m = await import(pathToFileURL(resolve(d, 'ca/index.js')).href);
  builds.push({ dir: d, decodeDbr: m.decodeDbr, encodeDbr: m.encodeDbr });
}

const cases = [
  { name: 'TIME_DOUBLE', type: 20, value: 3.25, n: 2_000_000 },
  { name: 'CTRL_DOUBLE', type: 34, value: 3.25, n: 1_000_000 },
  { name: 'TIME_DOUBLE[1000]', type: 20, value: Array.from({ length: 1000 }, (_, i) => i), n: 100_000 },
];

function round(b, c, payload, count) {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < c.n; i++) {
    const r = b.decodeDbr(c.type, count, payload, count > 1 ? 1 : 0);
    sink += r.severity ?? 0;
  }
  const ns = Number(process.hrtime.bigint() - t0) / c.n;
  if (sink < 0) console.log(sink);
  return ns;
}

for (const c of cases) {
  const { payload, count } = builds[0].encodeDbr(c.type, c.value, { severity: 1, status: 3, secondsPastEpoch: 1000, nanoseconds: 5 });
  const times = builds.map(() => []);
  for (let k = 0; k < 7; k++) builds.forEach((b, i) => times[i].push(round(b, c, payload, count)));
  const med = times.map((t) => t.sort((a, b) => a - b)[3]);
  const cells = builds.map((b, i) => `${b.dir}: ${med[i].toFixed(1)} ns`);
  const ratio = med.length > 1 ? `  ratio ${(med[0] / med[1]).toFixed(2)}` : '';
  console.log(`${c.name.padEnd(18)} ${cells.join('  ')}${ratio}`);
}
