// IOC reboots: monitors of TEST:CALC1..N by each client, in one run, while the built-in IOC is
// stopped and started again on the same ports after outages of several lengths. For each outage
// and client: the time from the new IOC answering its first read to the last monitor's first
// update (every monitor resumed). libca's own repeater (ca_repeater() of the wheel's libca) runs
// throughout, as on a host with caRepeater; this project's client registers with it too.
//
//   node benchmarks/reboot.mjs [--records 1000] [--outages 5,40,150] [--clients node-ca,node-pva,pyepics,p4p] [--out FILE]
//
// Clients: node-ca and node-pva (this library, benchmarks/reboot-client.mjs), pyepics (libca) and p4p
// (pvxs) (benchmarks/reboot-client.py). Prints a table and writes JSON (default benchmarks/results/reboot.json).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(HERE, '../packages/epicsperf/dist');
const CLIENT_DIST = resolve(HERE, '../packages/client/dist');
const { startIoc } = await import(`${DIST}/ioc/index.js`);
const { freePort } = await import(`${DIST}/ioc/ports.js`);
const { ensurePythonEnv } = await import(`${DIST}/pyenv/index.js`);

const { values: opt } = parseArgs({
  options: {
    records: { type: 'string', default: '1000' },
    outages: { type: 'string', default: '5,40,150' },
    clients: { type: 'string', default: 'node-ca,node-pva,pyepics,p4p' },
    out: { type: 'string', default: join(HERE, 'results/reboot.json') },
    'give-up': { type: 'string', default: '120' },
  },
});
const N = Number(opt.records);
const outages = opt.outages.split(',').map(Number);
const clientNames = opt.clients.split(',');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const python = await ensurePythonEnv();
const caPort = await freePort({ tcp: true, udp: true });
const pvaPort = await freePort({ tcp: true, udp: true }, new Set([caPort, caPort - 1, caPort + 1]));
const iocOptions = { records: N, rate: 10, arrayElements: 0, caPort, pvaPort, startTimeout: 300_000 };
const children = [];
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

// libca's repeater (its C++ ca_repeater(), which the caRepeater program runs), from the libca the
// Python clients use, on the port the IOC's environment
// names (the CA port + 1), before anything else can start one there.
const repeaterEnv = { ...process.env, EPICS_CA_REPEATER_PORT: String(caPort + 1) };
const repeater = spawn(python, ['-c', 'import ctypes, epicscorelibs.path as p; getattr(ctypes.CDLL(p.get_lib("ca")), "_Z11ca_repeaterv")()'], { env: repeaterEnv, stdio: 'ignore' });
children.push(repeater);
await sleep(1000);
if (repeater.exitCode !== null) throw new Error(`libca's repeater exited (${repeater.exitCode})`);
let ioc = await startIoc(iocOptions);
if (ioc.env.EPICS_CA_REPEATER_PORT !== repeaterEnv.EPICS_CA_REPEATER_PORT) throw new Error('the IOC names another repeater port');
const env = { ...process.env, ...ioc.env };

/** A client process speaking the mark/report protocol. */
function client(name) {
  const [cmd, args] = name.startsWith('node-')
    ? [process.execPath, [join(HERE, 'reboot-client.mjs'), name.slice(5), String(N), CLIENT_DIST]]
    : [python, [join(HERE, 'reboot-client.py'), name, String(N)]];
  const child = spawn(cmd, args, { env, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ask = async (line) => {
    child.stdin.write(line + '\n');
    const r = await lines.next();
    if (r.done) throw new Error(`${name} exited`);
    return r.value;
  };
  return { name, ready: lines.next(), ask };
}

const clients = clientNames.map(client);
await Promise.all(clients.map((c) => c.ready));
/** Wait until every client has an update of every PV since its last mark; resolves the times. */
async function resumed(sinceMs) {
  const out = {};
  const deadline = Date.now() + Number(opt['give-up']) * 1000;
  for (;;) {
    for (const c of clients) {
      if (out[c.name]) continue;
      const r = JSON.parse(await c.ask('report'));
      if (r.resumed === N) out[c.name] = { ms: r.last - sinceMs };
    }
    if (Object.keys(out).length === clients.length) return out;
    if (Date.now() > deadline) {
      for (const c of clients) if (!out[c.name]) out[c.name] = { gaveUp: JSON.parse(await c.ask('report')).resumed };
      return out;
    }
    await sleep(50);
  }
}
await resumed(0);
console.error(`${clients.length} clients monitoring ${N} counters each`);

const rows = [];
for (const outage of outages) {
  await ioc.stop();
  await sleep(300); // updates already on their way are read before the mark
  for (const c of clients) await c.ask('mark');
  await sleep(outage * 1000 - 300);
  const started = Date.now();
  ioc = await startIoc(iocOptions);
  const answered = Date.now();
  const times = await resumed(answered);
  rows.push({ outageS: outage, iocStartMs: answered - started, clients: times });
  console.error(`outage ${outage} s: ${JSON.stringify(times)}`);
}
await ioc.stop();
children.forEach((c) => c.kill('SIGTERM'));

const fmt = (t) => (t.gaveUp !== undefined ? `not all (${t.gaveUp}/${N}) in ${opt['give-up']} s` : `${(t.ms / 1000).toFixed(2)} s`);
const head = `| outage | ${clients.map((c) => c.name).join(' | ')} |`;
const table = [head, `|---|${clients.map(() => '---:').join('|')}|`, ...rows.map((r) => `| ${r.outageS} s | ${clients.map((c) => fmt(r.clients[c.name])).join(' | ')} |`)].join('\n');
console.log(table);
const result = {
  date: new Date().toISOString(), host: hostname(), cores: cpus().length, command: `node benchmarks/reboot.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  records: N, rateHz: 10, measured: 'ms from the new IOC answering its first CA read to every monitor of the client having an update', rows,
};
writeFileSync(opt.out, JSON.stringify(result, null, 2) + '\n');
writeFileSync(opt.out.replace(/\.json$/, '.md'), `${result.command} (${result.date}, ${result.host}, ${result.cores} cores; ${N} counters at 10 Hz per client; ${result.measured})\n\n${table}\n`);
process.exit(0);
