// Run on a rig host by packages/epicsperf/test/integration/network.test.ts: the library with the EPICS defaults of the host it
// runs on (whatever EPICS_* the test passes), reading, monitoring and snapshotting the built-in
// IOC's PVs over CA and PVA. Prints one JSON object of what it saw; the test judges it.
import { Context } from '../../../client/dist/index.js';
import { collect, settle } from 'epicsperf-testkit/netns-reads';

const P = process.argv[2] ?? 'TEST:';
const TIMEOUT = 5000;

const out = {};
const ctx = new Context();
try {
  out.caGet = await settle(ctx.get(`${P}KIND:LONG`, { timeout: TIMEOUT }));
  out.pvaGet = await settle(ctx.get(`pva://${P}KIND:DOUBLE`, { timeout: TIMEOUT }));
  out.caMonitor = await collect(ctx, `${P}CALC1`, 3, TIMEOUT);
  out.pvaMonitor = await collect(ctx, `pva://${P}CALC2`, 3, TIMEOUT);
  const names = [`${P}CALC1`, `${P}CALC2`, `${P}KIND:STRING`, `${P}NO:SUCH:PV`];
  for (const [key, prefix] of [
    ['caSnapshot', ''],
    ['pvaSnapshot', 'pva://'],
  ]) {
    const res = await ctx.snapshot(
      names.map((n) => prefix + n),
      { timeout: 1000 },
    );
    out[key] = res.map((r) => (r.ok ? { name: r.name, ok: true } : { name: r.name, ok: false, code: r.error.code }));
  }
  out.stats = ctx.stats();
} finally {
  await ctx.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
