// The packages as users get them: packed with `npm pack`, installed offline into a fresh project
// (the client alone into a TypeScript one, compiled with tsc, strict, skipLibCheck false; the tool
// with it), and run against the built-in IOC; a missing file, a wrong `exports` entry, a
// dependency of the client or types that do not compile fail here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { pyepicsRead } from 'epicsperf-testkit/client-helpers';
import { makeConsumer } from '../helpers/consumer.js';

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true,
    skipLibCheck: false,
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    target: 'ES2022',
    outDir: 'dist',
    rootDir: 'src',
    types: ['node'],
  },
  include: ['src'],
});

/** What a Node developer writes first: read, write, watch, ask what a channel is, handle a missing PV. */
const MAIN = `
import { Context, EpicsError, NotFoundError, PvaReading, type EpicsErrorCode, type ChannelInfo, type CtrlReading, type FullReading, type TimeReading } from 'epics-client';
import { decodeDbr } from 'epics-client/ca';
import { BitSet } from 'epics-client/pva';
import { compareLive, parseSnapshot, save, writeSnapshot, type Diff } from 'epics-client/saveset';

const ctx = new Context();
const t: TimeReading = await ctx.get('TEST:KIND:DOUBLE');
const stamp: Date = t.timestamp;
const c: CtrlReading = await ctx.get('TEST:KIND:DOUBLE', { form: 'ctrl' });
const none: undefined = c.timestamp;
const f: FullReading = await ctx.get('TEST:KIND:DOUBLE', { form: 'full' });
await ctx.put('TEST:KIND:LONG', 55);
const info: ChannelInfo = await ctx.info('TEST:KIND:ARR:SHORT');
const counts: number[] = [];
for await (const ev of ctx.monitor('TEST:CALC1')) {
  if (ev.kind === 'update') counts.push(ev.value as number);
  if (counts.length === 3) break;
}
let missing = '';
let base = false;
try {
  await ctx.get('TEST:NO:SUCH', { timeout: 300 });
} catch (e) {
  if (e instanceof NotFoundError) missing = e.code;
  // Every failure is an EpicsError with an ERR_EPICS_* code.
  if (e instanceof EpicsError) {
    const code: EpicsErrorCode = e.code;
    base = code === missing;
  }
}
const p: PvaReading = await ctx.get('pva://TEST:KIND:DOUBLE');
await ctx.put('pva://TEST:KIND:SHORT', 77);
const pvaCounts: number[] = [];
for await (const ev of ctx.monitor('pva://TEST:CALC2')) {
  if (ev.kind === 'update') pvaCounts.push(ev.value as number);
  if (pvaCounts.length === 3) break;
}
const set = parseSnapshot(writeSnapshot(await save(ctx, ['TEST:KIND:DOUBLE', 'pva://TEST:KIND:ENUM'], { timeout: 2000 })));
const diff: Diff = await compareLive(ctx, set, { timeout: 2000 });
await ctx.close();
console.log(JSON.stringify({
  saveset: { saved: set.pvs.map((x) => x.ok), equal: diff.equal },
  value: t.value, stampYear: stamp.getUTCFullYear(), ctrlStamp: none === undefined, units: c.metadata.units,
  full: { units: f.metadata.units, hasStamp: f.timestamp instanceof Date, severity: f.severity },
  info, counts, missing, base, decoder: typeof decodeDbr, bitset: typeof BitSet,
  pva: { value: p.value, units: p.nt.kind === 'NTScalar' ? p.nt.display?.units : undefined, counts: pvaCounts },
}));
`;

/** Code the types must refuse: a CTRL reading's timestamp used as a Date. */
const WRONG = `
import { Context } from 'epics-client';
const r = await new Context().get('TEST:KIND:DOUBLE', { form: 'ctrl' });
export const ms: number = r.timestamp.getTime();
`;

let ioc: Ioc;
let dir: string;
let app: string;

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
  dir = mkdtempSync(join(tmpdir(), 'epicsperf-consumer-'));
  app = makeConsumer(dir, ['client'], { 'tsconfig.json': TSCONFIG, 'src/main.ts': MAIN });
});

afterAll(async () => {
  await ioc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('an app of the packed client package', () => {
  it('gets the client and nothing else: no dependency in npm ls --omit=dev', () => {
    const ls = JSON.parse(execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: app, encoding: 'utf8' })) as {
      dependencies: Record<string, { dependencies?: object }>;
    };
    expect(ls.dependencies['epics-client']).toBeDefined();
    expect(ls.dependencies['epics-client']!.dependencies ?? {}).toEqual({});
  });

  it('compiles under strict TypeScript with skipLibCheck false', () => {
    const r = spawnSync(join(app, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: app, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('runs against the built-in IOC: read, write, watch, info, a missing PV, save and compare, over CA and PVA', async () => {
    const out = execFileSync(process.execPath, ['dist/main.js'], {
      cwd: app,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, ...ioc.env },
    });
    const got = JSON.parse(out.trim());
    expect(got.value).toBe(3.14159);
    expect(got.stampYear).toBeGreaterThanOrEqual(2024);
    expect(got.ctrlStamp).toBe(true);
    expect(got.units).toBe('mm');
    expect(got.full).toEqual({ units: 'mm', hasStamp: true, severity: 0 });
    expect(got.info).toMatchObject({ nativeType: 'short', elementCount: 10, port: ioc.caPort, readAccess: true, writeAccess: true });
    expect(got.counts[1]).toBe(got.counts[0] + 1);
    expect(got.missing).toBe('ERR_EPICS_NOT_FOUND');
    expect(got.base).toBe(true);
    expect(got.decoder).toBe('function');
    expect(got.bitset).toBe('function');
    expect(got.pva.value).toBe(3.14159);
    expect(got.pva.units).toBe('mm');
    expect(got.pva.counts[1]).toBe(got.pva.counts[0] + 1);
    expect(got.saveset).toEqual({ saved: [true, true], equal: true });
    const after = await pyepicsRead(ioc.env, ['TEST:KIND:LONG', 'TEST:KIND:SHORT']);
    expect(after.map((r) => r.value)).toEqual([55, 77]);
  });

  it("the package's types refuse a CTRL reading's timestamp used as a Date", () => {
    // The project that compiled above, with one wrong file: tsc must reject exactly that line.
    const wrong = spawnSync('sh', ['-c', `cat > src/wrong.ts && node_modules/.bin/tsc --noEmit -p .; s=$?; rm -f src/wrong.ts; exit $s`], {
      cwd: app,
      encoding: 'utf8',
      input: WRONG,
    });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toMatch(/src\/wrong\.ts\(4,\d+\): error TS18048: 'r\.timestamp' is possibly 'undefined'/);
  });
});

describe("the packed operator's commands with the packed client", () => {
  let opsApp: string;
  beforeAll(() => {
    opsApp = makeConsumer(join(dir, 'ops'), ['client', 'ops'], {});
  });

  it('depends on commander and the client only, and they on nothing', () => {
    type Tree = { dependencies?: Record<string, Tree> };
    const ls = JSON.parse(execFileSync('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: opsApp, encoding: 'utf8' })) as Tree;
    const ops = ls.dependencies!['epics-ops']!;
    expect(Object.keys(ops.dependencies ?? {}).sort()).toEqual(['commander', 'epics-client']);
    for (const d of Object.values(ops.dependencies!)) expect(d.dependencies ?? {}).toEqual({});
  });

  it('npx epics-ops runs: a caget, a snapshot saved and compared live, and a one-line error', () => {
    const bin = join(opsApp, 'node_modules/.bin/epics-ops');
    const env = { ...process.env, ...ioc.env };
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(execFileSync(bin, ['ca', 'get', 'TEST:KIND:DOUBLE'], { encoding: 'utf8', env, timeout: 30_000 })).toMatch(
      /TEST:KIND:DOUBLE\s+3\.14159/,
    );
    writeFileSync(join(opsApp, 'pvs.txt'), 'TEST:KIND:DOUBLE\nTEST:KIND:LONG\nTEST:NO:SUCH\n');
    const read = spawnSync(bin, ['snapshot', 'pvs.txt', '--format', 'json', '--timeout', '500'], { cwd: opsApp, encoding: 'utf8', env });
    expect(read.status, read.stderr).toBe(1);
    expect(JSON.parse(read.stdout)).toMatchObject({ client: 'epics-client', answered: 2, failed: 1 });
    const saved = spawnSync(bin, ['snapshot', 'pvs.txt', '--save', 'set.snap', '--timeout', '500'], { cwd: opsApp, encoding: 'utf8', env });
    expect(saved.stdout).toMatch(/saved 3 PVs to set\.snap/);
    const diff = spawnSync(bin, ['diff', 'set.snap', '--live', '--only', 'KIND:DOUBLE'], { cwd: opsApp, encoding: 'utf8', env });
    expect(diff.status, diff.stderr + diff.stdout).toBe(0);
    const bad = spawnSync(bin, ['restore', 'nothing.snap', '--yes'], { cwd: opsApp, encoding: 'utf8', env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^epics-ops: error: cannot read .*nothing\.snap: no such file\n$/);
  });
});

describe('the packed tool with the packed client', () => {
  let toolApp: string;
  beforeAll(() => {
    toolApp = makeConsumer(join(dir, 'tool'), ['client', 'ops', 'epicsperf'], {});
  });

  it('npx epicsperf runs: its version, and a caget of the built-in IOC', () => {
    const bin = join(toolApp, 'node_modules/.bin/epicsperf');
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
    const got = execFileSync(bin, ['ca', 'get', 'TEST:KIND:DOUBLE'], {
      encoding: 'utf8',
      env: { ...process.env, ...ioc.env },
      timeout: 30_000,
    });
    expect(got).toMatch(/TEST:KIND:DOUBLE\s+3\.14159/);
  });
});
