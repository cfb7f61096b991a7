// Run on a rig host by packages/client/test/integration/network-routed.test.ts: the library with the EPICS_* the test
// passes. `get NAME MS`: one read, printed as one JSON object ({value} or {error}, and stats()).
// `monitor NAME`: one JSON line per event ({t, kind, value}) until stdin closes.
import { createInterface } from 'node:readline';
import { Context } from '../../dist/index.js';
import { settle } from 'epicsperf-testkit/netns-reads';

const [mode, name, ms] = process.argv.slice(2);
const ctx = new Context();
if (mode === 'get') {
  const out = await settle(ctx.get(name, { timeout: Number(ms) }));
  out.stats = ctx.stats();
  await ctx.close();
  process.stdout.write(JSON.stringify(out) + '\n');
} else if (mode === 'monitor') {
  const m = ctx.monitor(name, {}, (e) => {
    process.stdout.write(JSON.stringify({ t: Date.now(), kind: e.kind, ...(e.kind === 'update' && { value: Number(e.value) }) }) + '\n');
  });
  for await (const _ of createInterface({ input: process.stdin }));
  m.close();
  await ctx.close();
} else {
  process.stderr.write(`unknown mode ${mode}: get NAME MS | monitor NAME\n`);
  process.exit(2);
}
