// Run on a rig host by packages/client/test/integration/pva-ipv6.test.ts: the library with the Context options
// given as JSON in argv[2] (and no EPICS_* of the environment), reading one PV and monitoring
// another over PV Access, each given argv[3] ms (default 5000). Prints one JSON object of what it saw; the test judges it.
import { Context } from '../../dist/index.js';
import { collect, settle } from 'epicsperf-testkit/netns-reads';

const options = JSON.parse(process.argv[2] ?? '{}');
const TIMEOUT = Number(process.argv[3] ?? 5000);

const out = {};
const ctx = new Context({ protocol: 'pva', env: {}, ...options });
try {
  out.get = await settle(ctx.get('pva://TEST:KIND:DOUBLE', { timeout: TIMEOUT }));
  out.monitor = await collect(ctx, 'pva://TEST:CALC2', 3, TIMEOUT);
  out.stats = ctx.stats();
} finally {
  await ctx.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
