// One client of benchmarks/reboot.mjs on this project's library: monitors TEST:CALC1..N over CA or
// PV Access, and answers `mark` and `report` on stdin as benchmarks/reboot-client.py does.
import { createInterface } from 'node:readline';

const [protocol, count, dist] = process.argv.slice(2);
const { Context } = await import(`${dist}/index.js`);
const n = Number(count);
const ctx = new Context();
let first = new Array(n).fill(null);
for (let i = 0; i < n; i++) {
  const name = `${protocol === 'pva' ? 'pva://' : ''}TEST:CALC${i + 1}`;
  ctx.monitor(name, {}, (e) => {
    if (e.kind === 'update' && first[i] === null) first[i] = Date.now();
  });
}
console.log('ready');
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'mark') {
    first = new Array(n).fill(null);
    console.log('ok');
  } else if (line === 'report') {
    const got = first.filter((t) => t !== null);
    const s = ctx.stats();
    const datagrams = protocol === 'pva' ? s.pva?.datagramsSent : s.datagramsSent;
    // biome-ignore lint/complexity/useMathMinMax: up to 100,000 times, too many for Math.max's arguments
    console.log(JSON.stringify({ resumed: got.length, last: got.length ? got.reduce((a, b) => (b > a ? b : a)) : null, datagrams }));
  }
}
await ctx.close();
