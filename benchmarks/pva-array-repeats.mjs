// Where a "repeated" update of the PV Access array workload comes from: a monitor of
// pva://PREFIX:ARRAY (as the node-pva runner opens it: field(value,alarm,timeStamp), reuseArrays)
// for a while, printing every update whose first element equals the previous update's, with its
// middle and last elements, whether it is the previous update's array object (the server marked
// no new value) or a new one, and both IOC timestamps.
//
//   npx epicsperf ioc --records 1 --array-elements 10000000 --array-type int64 --array-rate max --write-env /tmp/ioc.env &
//   node benchmarks/pva-array-repeats.mjs /tmp/ioc.env [seconds]
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadIocEnv } from './ioc-env.mjs';

const [envFile, secondsArg = '60'] = process.argv.slice(2);
if (!envFile) {
  console.error('usage: node benchmarks/pva-array-repeats.mjs ENV_FILE [SECONDS]');
  process.exit(2);
}
loadIocEnv(envFile);
const { Context } = await import(resolve(dirname(fileURLToPath(import.meta.url)), '../packages/client/dist/index.js'));
const ctx = new Context({ protocol: 'pva' });
const name = `${process.env.EPICSPERF_PREFIX ?? 'TEST:'}ARRAY`;
let last;
let updates = 0;
let repeats = 0;
let skipped = 0;
const m = ctx.monitor(name, { request: 'field(value,alarm,timeStamp)', reuseArrays: true }, (e) => {
  if (e.kind === 'error') console.error(`${name}: ${e.error.message}`);
  if (e.kind !== 'update') return;
  const v = e.value;
  const first = v[0];
  updates++;
  if (last && first === last.first) {
    repeats++;
    const same = v === last.value ? 'the previous array object (no new value)' : 'a new array';
    console.log(
      `update ${updates}: first ${first}, middle ${v[v.length >> 1]}, last ${v[v.length - 1]}: ${same}; IOC time ${e.posixSeconds.toFixed(4)} after ${last.time.toFixed(4)}`,
    );
  } else if (last) skipped += Number(first - last.first) - 1;
  last = { value: v, first, time: e.posixSeconds };
});
setTimeout(async () => {
  m.close();
  console.log(JSON.stringify({ seconds: Number(secondsArg), updates, repeats, skipped }));
  await ctx.close();
}, Number(secondsArg) * 1000);
