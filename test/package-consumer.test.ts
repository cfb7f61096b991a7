// The package as a user gets it: packed with `npm pack`, installed into a fresh TypeScript project,
// compiled with tsc (strict, skipLibCheck false) and run against the built-in IOC; a missing file,
// a wrong `exports` entry or types that do not compile fail here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../src/ioc/index.js';
import { pyepicsRead } from './client-helpers.js';
import { makeConsumer } from './helpers/consumer.js';

const TSCONFIG = JSON.stringify({
  compilerOptions: {
    strict: true, skipLibCheck: false, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022',
    outDir: 'dist', rootDir: 'src', types: ['node'],
  },
  include: ['src'],
});

/** What a Node developer writes first: read, write, watch, ask what a channel is, handle a missing PV. */
const MAIN = `
import { Context, NotFoundError, type ChannelInfo, type CtrlReading, type FullReading, type TimeReading } from 'epicsperf';
import { decodeDbr } from 'epicsperf/ca';

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
try {
  await ctx.get('TEST:NO:SUCH', { timeout: 300 });
} catch (e) {
  if (e instanceof NotFoundError) missing = e.code;
}
await ctx.close();
console.log(JSON.stringify({
  value: t.value, stampYear: stamp.getUTCFullYear(), ctrlStamp: none === undefined, units: c.metadata.units,
  full: { units: f.metadata.units, hasStamp: f.timestamp instanceof Date, severity: f.severity },
  info, counts, missing, decoder: typeof decodeDbr,
}));
`;

/** Code the types must refuse: a CTRL reading's timestamp used as a Date. */
const WRONG = `
import { Context } from 'epicsperf';
const r = await new Context().get('TEST:KIND:DOUBLE', { form: 'ctrl' });
export const ms: number = r.timestamp.getTime();
`;

let ioc: Ioc;
let dir: string;
let app: string;

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
  dir = mkdtempSync(join(tmpdir(), 'epicsperf-consumer-'));
  app = makeConsumer(dir, { 'tsconfig.json': TSCONFIG, 'src/main.ts': MAIN });
});

afterAll(async () => {
  await ioc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a consumer project of the packed package', () => {
  it('compiles under strict TypeScript with skipLibCheck false', () => {
    const r = spawnSync(join(app, 'node_modules/.bin/tsc'), ['-p', '.'], { cwd: app, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('runs against the built-in IOC: read, write, watch, info, a missing PV', async () => {
    const out = execFileSync(process.execPath, ['dist/main.js'], {
      cwd: app, encoding: 'utf8', timeout: 30_000,
      env: { ...process.env, ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' },
    });
    const got = JSON.parse(out.trim());
    expect(got.value).toBe(3.14159);
    expect(got.stampYear).toBeGreaterThanOrEqual(2024);
    expect(got.ctrlStamp).toBe(true);
    expect(got.units).toBe('mm');
    expect(got.full).toEqual({ units: 'mm', hasStamp: true, severity: 0 });
    expect(got.info).toMatchObject({ nativeType: 'short', elementCount: 10, port: ioc.caPort, readAccess: true, writeAccess: true });
    expect(got.counts[1]).toBe(got.counts[0] + 1);
    expect(got.missing).toBe('ERR_CA_NOT_FOUND');
    expect(got.decoder).toBe('function');
    expect((await pyepicsRead(ioc.env, ['TEST:KIND:LONG']))[0]!.value).toBe(55);
  });

  it("the package's types refuse a CTRL reading's timestamp used as a Date", () => {
    // The project that compiled above, with one wrong file: tsc must reject exactly that line.
    const wrong = spawnSync('sh', ['-c', `cat > src/wrong.ts && node_modules/.bin/tsc --noEmit -p .; s=$?; rm -f src/wrong.ts; exit $s`], {
      cwd: app, encoding: 'utf8', input: WRONG,
    });
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toMatch(/src\/wrong\.ts\(4,\d+\): error TS18048: 'r\.timestamp' is possibly 'undefined'/);
  });
});
