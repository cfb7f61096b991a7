// Agents on namespace hosts: the orchestrator on one host, agents a and b running clients on two
// others, agent c running the IOC on a fourth, all on one bridge with links shaped to 1 Gbit/s,
// CA and PVA found by broadcast, CURVE keys. A run spread over them gives the rows a local run gives; an orchestrator with a key
// the agents do not trust gets nothing; a lost agent's rows say so while the others finish; a
// killed orchestrator leaves nothing running; the namespaces are gone afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runCli } from 'epicsperf-testkit/cli';
import { cleanEnv, Rig, type Host } from 'epicsperf-testkit/netns';

const made = Rig.make(4);
const rig = typeof made === 'string' ? undefined : made;
if (typeof made === 'string') process.stderr.write(`packages/epicsperf/test/integration/agents.test.ts skipped: ${made}\n`);

const PORT = 5599;
const AGENTS = ['a', 'b', 'c'] as const;

interface Row {
  client: string;
  host?: string;
  ok: boolean;
  error?: string;
  cpuPercent?: { mean: number };
  check?: { ok: boolean; pvs: number; samples: number; findings: string[] };
}
interface LoadResults {
  hosts: { name: string }[];
  steps: {
    totalClients: number;
    updatesS: number;
    hosts: { host: string; cpuPercent: number; runners: number }[];
    runners: { host: string; ok: boolean }[];
    fairness?: { steadyFraction: number };
  }[];
}
interface Results {
  monitor?: { runs: Row[] };
  hosts?: { name: string; address: string; runs: string[]; environment: { epicsperf: string } }[];
}

/** Processes of the project's runners and IOC in a namespace (`only`: whose command line has it). */
function projectPids(host: Host, only?: string): number[] {
  const out = execFileSync('ip', ['netns', 'pids', host.ns], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(Boolean)
    .map(Number)
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return /dist\/runners\/|epicsperf_runners/.test(cmd) && (only === undefined || cmd.includes(only));
      } catch {
        return false;
      }
    });
}

async function until(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(!rig)('agents on namespace hosts', () => {
  let orch: Host;
  const hostOf: Record<string, Host> = {};
  const agents: Record<string, ChildProcess> = {};
  const keys = mkdtempSync(join(tmpdir(), 'epicsperf-keys-'));
  const hostsArg = () => AGENTS.map((n) => `${n}=tcp://${hostOf[n]!.address}:${PORT}`).join(',');

  async function startAgent(name: string): Promise<void> {
    const child = rig!.spawn(hostOf[name]!, process.execPath, [
      BIN,
      'agent',
      '--bind',
      `tcp://${hostOf[name]!.address}:${PORT}`,
      '--keys',
      keys,
      '--name',
      name,
    ]);
    agents[name] = child;
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('listening')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`agent ${name} exited (${code}): ${err}`)));
    });
  }

  const epicsperf = (args: string[], timeoutMs = 240_000) =>
    rig!.run(orch, process.execPath, [BIN, ...args, '--keys', keys], { env: cleanEnv(), timeoutMs });

  beforeAll(async () => {
    const [h1, h2, h3, h4] = rig!.hosts as [Host, Host, Host, Host];
    orch = h1;
    Object.assign(hostOf, { a: h2, b: h3, c: h4 });
    rig!.shape('1gbit');
    expect(rig!.qdisc(h4)).toMatch(/tbf .*rate 1Gbit/);
    for (const name of ['orchestrator', ...AGENTS]) {
      const r = await runCli(['agent', '--keygen', name, '--keys', keys]);
      expect(r.code, r.stderr).toBe(0);
    }
    await Promise.all(AGENTS.map((n) => startAgent(n)));
  }, 60_000);

  afterAll(() => {
    rig?.close();
    rmSync(keys, { recursive: true, force: true });
  });

  it('a monitor run with node on one host and pyepics on another, the IOC on a third, gives the checked rows a local run gives', async () => {
    const args = ['bench', 'monitor', '--clients', 'node,pyepics', '--records', '50', '--samples', '30', '--format', 'json'];
    const spread = await epicsperf([...args, '--hosts', hostsArg(), '--place', 'node=a,pyepics=b,ioc=c']);
    expect(spread.code, spread.stderr).toBe(0);
    const r = JSON.parse(spread.stdout) as Results;
    const rows = r.monitor!.runs;
    // The checks a local run passes (every sample of the 50 PVs), and CPU measured on the hosts.
    expect(rows.map((x) => [x.client, x.host, x.ok, x.check?.ok, x.check?.pvs, x.check?.findings])).toEqual([
      ['node', 'a', true, true, 50, []],
      ['pyepics', 'b', true, true, 50, []],
    ]);
    for (const x of rows) expect(x.cpuPercent?.mean, JSON.stringify(x)).toBeGreaterThan(0);
    // Every host is recorded, with its doctor report and what ran there.
    expect(r.hosts!.map((h) => [h.name, h.runs])).toEqual([
      ['a', ['node']],
      ['b', ['pyepics']],
      ['c', ['ioc']],
    ]);
    for (const h of r.hosts!) expect(h.environment.epicsperf).toMatch(/\d/);
    // The run was kept in the folder the test run gave (EPICSPERF_RESULTS), not the user's.
    expect(spread.stderr).toContain(`results: ${process.env.EPICSPERF_RESULTS}/bench-`);
  }, 300_000);

  it('a snapshot on one host of an IOC on another, each value checked there by c-libca', async () => {
    const list = join(keys, 'pvs.txt');
    writeFileSync(list, 'TEST:CALC1\nTEST:CALC2\nTEST:MISSING1\nTEST:CALC3\n');
    const r = await epicsperf(
      ['snapshot', list, '--ioc', 'builtin', '--check', '--format', 'json', '--hosts', hostsArg(), '--place', 'node=b,ioc=c'],
      120_000,
    );
    expect(r.code, r.stderr).toBe(1); // a missing PV
    const run = JSON.parse(r.stdout) as {
      host: string;
      answered: number;
      wrong: number;
      rows: { name: string; ok: boolean; correct?: boolean }[];
    };
    expect(run).toMatchObject({ host: 'b', answered: 3, wrong: 0 });
    expect(run.rows.map((x) => [x.ok, x.correct])).toEqual([
      [true, true],
      [true, true],
      [false, undefined],
      [true, true],
    ]);
  }, 150_000);

  it('a capture on an agent: its load steps run there against the IOC on another host, the summary comes back, the file goes', async () => {
    const leftovers = () => readdirSync(tmpdir()).filter((f) => f.startsWith('epicsperf-agent-capture-'));
    const before = leftovers();
    const steps = ['--capture-seconds', '1', '--capture-steps', '1000x10,array:100000x10'];
    const where = ['--hosts', hostsArg(), '--place', 'node=a,ioc=c'];
    const r = await epicsperf(['bench', 'capture', '--clients', 'node', ...steps, '--no-keep', '--format', 'json', ...where]);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as {
      hosts: { name: string; runs: string[] }[];
      capture: {
        diskError?: string;
        steps: {
          client: string;
          step: { kind: string; pvs: number; elements: number; rateHz: number };
          run: { ok: boolean; summary?: { updates: number } };
        }[];
      };
    };
    expect(res.hosts.find((h) => h.name === 'a')?.runs).toEqual(['node']);
    expect(res.hosts.find((h) => h.name === 'c')?.runs).toEqual(['ioc']);
    // The steps asked for, in order; the first (1000 counters x 10 Hz, 1 s) is well within one client's reach.
    expect(res.capture.steps.map((x) => [x.step.kind, x.step.pvs, x.step.elements, x.step.rateHz])).toEqual([
      ['scalar', 1000, 1, 10],
      ['array', 1, 100_000, 10],
    ]);
    const first = res.capture.steps[0]!;
    expect(first.run.ok).toBe(true);
    expect(first.run.summary!.updates).toBeGreaterThan(5000);
    expect(res.capture.diskError).toMatch(/node writes on another host's disk/);
    expect(leftovers()).toEqual(before);
  }, 150_000);

  it('an orchestrator whose key the agents do not trust gets nothing, and is told at once', async () => {
    const other = mkdtempSync(join(tmpdir(), 'epicsperf-keys-'));
    try {
      expect((await runCli(['agent', '--keygen', 'orchestrator', '--keys', other])).code).toBe(0);
      for (const n of AGENTS) copyFileSync(join(keys, `${n}.pub`), join(other, `${n}.pub`));
      const t0 = Date.now();
      const r = await rig!.run(
        orch,
        process.execPath,
        [BIN, 'bench', 'monitor', '--clients', 'node', '--records', '5', '--samples', '2', '--hosts', hostsArg(), '--keys', other],
        { env: cleanEnv(), timeoutMs: 60_000 },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^epicsperf: error: agent a at tcp:\/\/[\d.]+:5599: it refused this orchestrator's key/m);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      // At once, from the handshake's refusal: not after the 10 s wait for the agent's answer.
      expect(Date.now() - t0).toBeLessThan(8000);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  }, 90_000);

  it('killing an agent mid-run gives that host\'s rows "agent lost", and the others finish', async () => {
    const run = epicsperf([
      'bench',
      'monitor',
      '--clients',
      'node,pyepics',
      '--records',
      '50',
      '--samples',
      '80',
      '--format',
      'json',
      '--hosts',
      hostsArg(),
      '--place',
      'node=a,pyepics=b,ioc=c',
    ]);
    await until('the node runner on host a', () => projectPids(hostOf.a!, 'runners/node.js').length > 0, 60_000);
    await new Promise((r) => setTimeout(r, 2000));
    agents.a!.kill('SIGKILL');
    const done = await run;
    expect(done.code, done.stderr).toBe(0);
    const rows = (JSON.parse(done.stdout) as Results).monitor!.runs;
    expect(rows[0]).toMatchObject({ client: 'node', host: 'a', ok: false });
    expect(rows[0]!.error).toMatch(/^agent lost: no word from host a/);
    expect(rows[1]).toMatchObject({ client: 'pyepics', host: 'b', ok: true });
    // The runner on a ended with its agent (its stdin closed).
    await until('no runner left on host a', () => projectPids(hostOf.a!).length === 0, 10_000);
    await startAgent('a');
  }, 300_000);

  it('killing the orchestrator leaves no runner or IOC alive on any host', async () => {
    const child = rig!.spawn(orch, process.execPath, [
      BIN,
      'bench',
      'monitor',
      '--clients',
      'node,pyepics',
      '--records',
      '50',
      '--samples',
      '100',
      '--hosts',
      hostsArg(),
      '--place',
      'node=a,pyepics=b,ioc=c',
      '--keys',
      keys,
    ]);
    await until('the node runner on host a', () => projectPids(hostOf.a!, 'runners/node.js').length > 0, 60_000);
    expect(projectPids(hostOf.c!, 'epicsperf_runners.ioc')).toHaveLength(1);
    child.kill('SIGKILL');
    await until("nothing left on the agents' hosts", () => AGENTS.every((n) => projectPids(hostOf[n]!).length === 0), 15_000);
    // The agents live on and serve the next orchestrator.
    for (const n of AGENTS) expect(agents[n]!.exitCode).toBeNull();
  }, 120_000);

  it('a load run of 2 hosts x 4 node clients completes, each host measured there', async () => {
    const two = AGENTS.slice(0, 2)
      .map((n) => `${n}=tcp://${hostOf[n]!.address}:${PORT}`)
      .join(',');
    const r = await epicsperf([
      'bench',
      'load',
      '--clients',
      'node',
      '--steps',
      '2,4',
      '--records',
      '50',
      '--rate',
      '10',
      '--step-seconds',
      '3',
      '--format',
      'json',
      '--hosts',
      two,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const load = (JSON.parse(r.stdout) as { load: LoadResults }).load;
    // The IOC ran here (local), the runners on a and b.
    expect(load.hosts.map((h) => h.name).sort()).toEqual(['a', 'b', 'local']);
    const last = load.steps[load.steps.length - 1]!;
    expect(load.steps.map((s) => s.totalClients)).toEqual([4, 8]);
    expect(
      last.runners
        .filter((x) => x.ok)
        .map((x) => x.host)
        .sort(),
    ).toEqual(['a', 'a', 'a', 'a', 'b', 'b', 'b', 'b']);
    const busy = last.hosts.filter((h) => h.runners > 0);
    expect(busy.map((h) => h.host)).toEqual(['a', 'b']);
    for (const h of busy) expect(h.cpuPercent).toBeGreaterThan(0);
    // Every update of 50 counters at 10 Hz reached each of the 8 clients.
    expect(last.updatesS).toBeGreaterThan(0.8 * 8 * 50 * 10);
    expect(last.fairness?.steadyFraction).toBeGreaterThan(0.9);
  }, 180_000);

  it('leaves no namespace behind', () => {
    const names = rig!.hosts.map((h) => h.ns);
    rig!.close();
    const left = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    for (const n of names) expect(left).not.toContain(n);
  });
});

// Keys are made once per folder and never overwritten.
describe('agent keys', () => {
  it('--keygen writes a private key file and a public one, and refuses to overwrite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'epicsperf-keys-'));
    try {
      mkdirSync(dir, { recursive: true });
      const r = await runCli(['agent', '--keygen', 'x', '--keys', dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(readFileSync(join(dir, 'x.key'), 'utf8')).toMatch(/^secret-key = "[^"]{40}"$/m);
      expect(readFileSync(join(dir, 'x.pub'), 'utf8')).not.toMatch(/secret/);
      const again = await runCli(['agent', '--keygen', 'x', '--keys', dir]);
      expect(again.code).toBe(2);
      expect(again.stderr).toMatch(/exists already/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
