// IOC reboots on a network: monitors of TEST:CALC1..N by each client, in one run per network
// configuration, while the built-in IOC (`epicsperf ioc --listen 0.0.0.0`: the EPICS default ports
// 5064, 5065, 5075, 5076 and the EPICS defaults for beacons) is stopped and started again after
// outages of several lengths. The IOC runs on one namespace host, the clients on another: separate
// network stacks of this machine (one clock). For each outage and client: the time from the new IOC
// answering its first read (the CA read `epicsperf ioc` makes before it prints "ready") to the last
// monitor's first update (every monitor resumed). On the clients' host libca's own repeater
// (ca_repeater() of the wheel's libca) runs throughout, as on a host with caRepeater.
//
// Network configurations (--network, one or several, comma-separated):
//   default     the EPICS defaults on both hosts: clients find the IOC by broadcast across one bridge.
//   unicast     one bridge; clients with EPICS_CA_ADDR_LIST / EPICS_PVA_ADDR_LIST = the IOC's address
//               and *_AUTO_ADDR_LIST=NO; the IOC's beacons at the EPICS defaults (no *_BEACON_ADDR_LIST).
//   nameserver  the IOC on another subnet, across a router (broadcasts do not cross); clients with
//               EPICS_CA_NAME_SERVERS / EPICS_PVA_NAME_SERVERS = the IOC's address, empty address
//               lists and the automatic lists off.
//   routed      the IOC across a router; clients with address lists naming it, automatic lists off:
//               searches cross, the IOC's default beacons (broadcasts on its subnet) do not, so monitors
//               come back by each client's search schedule alone.
//
//   sudo node benchmarks/reboot.mjs [--network default,unicast,nameserver,routed] [--records 1000] [--rate 10] [--outages 5,40,150]
//        [--clients node-ca,node-pva,pyepics,p4p] [--give-up 120] [--out FILE]
//
// --give-up bounds every wait for a client's monitors, the first connection included: a client that
// has not every monitor by then is left out of that configuration's outages (the table says so).
// Needs root (it makes network namespaces). Clients: node-ca and node-pva (this library,
// benchmarks/reboot-client.mjs), pyepics (libca) and p4p (pvxs) (benchmarks/reboot-client.py).
// Prints a table per configuration and writes JSON (default benchmarks/results/reboot.json) and the
// tables beside it (reboot.md).
import { writeFileSync } from 'node:fs';
import { cpus, hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cleanEnv, Net } from './netns.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const DIST = resolve(HERE, '../packages/epicsperf/dist');
const CLIENT_DIST = resolve(HERE, '../packages/client/dist');
const BIN = resolve(HERE, '../packages/epicsperf/bin/epicsperf.js');

const NETWORKS = {
  default: {
    what: 'the EPICS defaults, broadcast across one bridge',
    net: () => new Net(2),
    env: () => ({}),
  },
  unicast: {
    what: "address lists naming the IOC, automatic lists off, the IOC's beacons at the EPICS defaults; one bridge",
    net: () => new Net(2),
    env: (ioc) => ({ EPICS_CA_ADDR_LIST: ioc, EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_ADDR_LIST: ioc, EPICS_PVA_AUTO_ADDR_LIST: 'NO' }),
  },
  nameserver: {
    what: 'name servers naming the IOC, empty address lists, automatic lists off; the IOC on another subnet, across a router',
    net: () => new Net({ left: 1, right: 1 }),
    env: (ioc) => ({
      EPICS_CA_NAME_SERVERS: ioc,
      EPICS_CA_ADDR_LIST: '',
      EPICS_CA_AUTO_ADDR_LIST: 'NO',
      EPICS_PVA_NAME_SERVERS: ioc,
      EPICS_PVA_ADDR_LIST: '',
      EPICS_PVA_AUTO_ADDR_LIST: 'NO',
    }),
  },
  routed: {
    what: 'address lists naming the IOC, automatic lists off; the IOC on another subnet, across a router, its beacons at the EPICS defaults (broadcast on its subnet: none reach the clients)',
    net: () => new Net({ left: 1, right: 1 }),
    env: (ioc) => ({ EPICS_CA_ADDR_LIST: ioc, EPICS_CA_AUTO_ADDR_LIST: 'NO', EPICS_PVA_ADDR_LIST: ioc, EPICS_PVA_AUTO_ADDR_LIST: 'NO' }),
  },
};

const { values: opt } = parseArgs({
  options: {
    network: { type: 'string', default: 'default,unicast,nameserver,routed' },
    records: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '10' },
    outages: { type: 'string', default: '5,40,150' },
    clients: { type: 'string', default: 'node-ca,node-pva,pyepics,p4p' },
    out: { type: 'string', default: join(HERE, 'results/reboot.json') },
    'give-up': { type: 'string', default: '120' },
  },
});
const N = Number(opt.records);
const outages = opt.outages.split(',').map(Number);
const clientNames = opt.clients.split(',');
const networks = opt.network.split(',');
const giveUpMs = Number(opt['give-up']) * 1000;
for (const n of networks) if (!NETWORKS[n]) throw new Error(`unknown network "${n}": default, unicast, nameserver or routed`);
for (const c of clientNames)
  if (!['node-ca', 'node-pva', 'pyepics', 'p4p'].includes(c)) throw new Error(`unknown client "${c}": node-ca, node-pva, pyepics or p4p`);
if (process.getuid?.() !== 0) {
  console.error('benchmarks/reboot.mjs makes network namespaces: run it as root');
  process.exit(1);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const { ensurePythonEnv } = await import(`${DIST}/pyenv/index.js`);
const python = await ensurePythonEnv();

let net;
process.on('exit', () => net?.close());
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

/** The built-in IOC on `host`; resolves once it has answered a CA read (its "ready" line). */
async function startIoc(host) {
  const child = net.spawn(
    host,
    process.execPath,
    [BIN, 'ioc', '--listen', '0.0.0.0', '--records', String(N), '--rate', opt.rate, '--array-elements', '0'],
    cleanEnv(),
    ['ignore', 'pipe', 'pipe'],
  );
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (/^ready$/m.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the IOC exited (${code}) before it was ready: ${err.trim().split('\n').pop()}`)));
  });
  return child;
}

/** Stop the IOC as Ctrl-C does and wait until it has exited. */
async function stopIoc(child) {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([gone, sleep(30_000).then(() => child.kill('SIGKILL'))]);
  await gone;
}

/** A client process on `host` speaking the mark/report protocol. */
function client(host, name, env) {
  const [cmd, args] = name.startsWith('node-')
    ? [process.execPath, [join(HERE, 'reboot-client.mjs'), name.slice(5), String(N), CLIENT_DIST]]
    : [python, [join(HERE, 'reboot-client.py'), name, String(N)]];
  const child = net.spawn(host, cmd, args, env);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const ask = async (line) => {
    child.stdin.write(line + '\n');
    const r = await lines.next();
    if (r.done) throw new Error(`${name} exited`);
    return r.value;
  };
  return { name, ready: lines.next(), ask };
}

/** Wait until every client in `clients` has an update of every PV since its last mark; resolves the times. */
async function resumed(clients, sinceMs) {
  const out = {};
  const deadline = Date.now() + giveUpMs;
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

/** One configuration: its hosts, IOC and clients, every outage; resolves its rows. */
async function measure(network) {
  const config = NETWORKS[network];
  net = config.net();
  const [iocHost, clientHost] = net.hosts;
  const settings = config.env(iocHost.address);
  const env = cleanEnv(settings);
  try {
    // libca's repeater on the clients' host, on the default port, before any client could start one.
    const repeater = net.spawn(
      clientHost,
      python,
      ['-c', 'import ctypes, epicscorelibs.path as p; getattr(ctypes.CDLL(p.get_lib("ca")), "_Z11ca_repeaterv")()'],
      cleanEnv(),
      'ignore',
    );
    await sleep(1000);
    if (repeater.exitCode !== null) throw new Error(`libca's repeater exited (${repeater.exitCode})`);
    let ioc = await startIoc(iocHost);
    const clients = clientNames.map((name) => client(clientHost, name, env));
    await Promise.all(clients.map((c) => c.ready));
    // A client that cannot monitor every PV at the start is left out of the outages.
    const start = await resumed(clients, 0);
    const missing = Object.fromEntries(
      Object.entries(start)
        .filter(([, t]) => t.gaveUp !== undefined)
        .map(([name, t]) => [name, t.gaveUp]),
    );
    const running = clients.filter((c) => missing[c.name] === undefined);
    console.error(
      `${network}: ${running.length} clients monitoring ${N} counters each${Object.keys(missing).length ? `; never all connected: ${JSON.stringify(missing)}` : ''}`,
    );
    const rows = [];
    for (const outage of outages) {
      await stopIoc(ioc);
      await sleep(300); // updates already on their way are read before the mark
      for (const c of running) await c.ask('mark');
      await sleep(Math.max(0, outage * 1000 - 300));
      const started = Date.now();
      ioc = await startIoc(iocHost);
      const answered = Date.now();
      const times = await resumed(running, answered);
      rows.push({ outageS: outage, iocStartMs: answered - started, clients: times });
      console.error(`${network}, outage ${outage} s: ${JSON.stringify(times)}`);
    }
    await stopIoc(ioc);
    return {
      network,
      description: config.what,
      iocHost: iocHost.address,
      clientHost: clientHost.address,
      clientEnv: settings,
      neverConnected: missing,
      rows,
    };
  } finally {
    net.close();
    net = undefined;
  }
}

const results = [];
for (const network of networks) results.push(await measure(network));

/** The cell of client `c` in row `row` of configuration `r`. */
const cell = (r, row, c) => {
  if (r.neverConnected[c] !== undefined) return `never all connected (${r.neverConnected[c]}/${N} in ${opt['give-up']} s)`;
  const t = row.clients[c];
  return t.gaveUp !== undefined ? `not all (${t.gaveUp}/${N}) in ${opt['give-up']} s` : `${(t.ms / 1000).toFixed(2)} s`;
};
const settingsText = (r) =>
  Object.keys(r.clientEnv).length
    ? Object.entries(r.clientEnv)
        .map(([k, v]) => `\`${k}=${v}\``)
        .join(' ')
    : 'no EPICS_* set';
const sections = results.map((r) => {
  const head = `| outage | ${clientNames.join(' | ')} |`;
  const lines = r.rows.map((row) => `| ${row.outageS} s | ${clientNames.map((c) => cell(r, row, c)).join(' | ')} |`);
  return [
    `### ${r.network}: ${r.description}; IOC on ${r.iocHost}, clients on ${r.clientHost} with ${settingsText(r)}`,
    '',
    head,
    `|---|${clientNames.map(() => '---:').join('|')}|`,
    ...lines,
  ].join('\n');
});
console.log(sections.join('\n\n'));
const result = {
  date: new Date().toISOString(),
  host: hostname(),
  cores: cpus().length,
  command: `node benchmarks/reboot.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  records: N,
  rateHz: Number(opt.rate),
  measured: 'ms from the new IOC answering its first CA read to every monitor of the client having an update',
  networks: results,
};
writeFileSync(opt.out, JSON.stringify(result, null, 2) + '\n');
writeFileSync(
  opt.out.replace(/\.json$/, '.md'),
  `${result.command} (${result.date}, ${result.host}, ${result.cores} cores; ${N} counters at ${opt.rate} Hz per client; ${result.measured})\n\nThe IOC: \`epicsperf ioc --listen 0.0.0.0\` (ports 5064, 5065, 5075, 5076; beacons at the EPICS defaults) on one namespace host, the clients on another, libca's repeater beside them.\n\n${sections.join('\n\n')}\n`,
);
process.exit(0);
