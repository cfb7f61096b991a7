// Run on a rig host by test/integration/pva-ipv6.test.ts: the library with the Context options
// given as JSON in argv[2] (and no EPICS_* of the environment), reading one PV and monitoring
// another over PV Access, each given argv[3] ms (default 5000). Prints one JSON object of what it saw; the test judges it.
import { Context } from '../../packages/client/dist/index.js';

const options = JSON.parse(process.argv[2] ?? '{}');
const TIMEOUT = Number(process.argv[3] ?? 5000);

const out = {};
const ctx = new Context({ protocol: 'pva', env: {}, ...options });
try {
  try {
    out.get = { value: (await ctx.get('pva://TEST:KIND:DOUBLE', { timeout: TIMEOUT })).value };
  } catch (err) {
    out.get = { error: `${err.code}: ${err.message}` };
  }
  out.monitor = await new Promise((resolve) => {
    const events = [];
    const values = [];
    let m;
    const done = () => {
      clearTimeout(timer);
      m?.close();
      resolve({ events, values });
    };
    const timer = setTimeout(done, TIMEOUT);
    m = ctx.monitor('pva://TEST:CALC2', {}, (e) => {
      events.push(e.kind);
      if (e.kind !== 'update') return;
      values.push(Number(e.value));
      if (values.length >= 3) done();
    });
  });
  out.stats = ctx.stats();
} finally {
  await ctx.close();
}
process.stdout.write(JSON.stringify(out) + '\n');
