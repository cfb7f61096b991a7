// The tool's binary has epics-ops's commands: `ca`, `snapshot --save`, `diff` and `restore` print
// what `epics-ops` prints for the same case, errors under the tool's name (the commands: packages/ops).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from '../../src/ioc/index.js';
import { contextFor } from 'epicsperf-testkit/client-helpers';
import { type CliResult, runCli, runOps } from 'epicsperf-testkit/cli';
import { schemaErrors } from '../helpers/schema.js';

let ioc: Ioc;
let env: Record<string, string>;
let ctx: ReturnType<typeof contextFor>;
let dir: string;
const K = 'TEST:KIND:';

beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0 });
  env = { ...ioc.env, EPICS_CA_ADDR_LIST: '127.0.0.1', EPICS_CA_AUTO_ADDR_LIST: 'NO' };
  ctx = contextFor(ioc.env);
  dir = mkdtempSync(join(tmpdir(), 'epicsperf-ops-'));
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

/** The same command line through both binaries, one after the other. */
async function both(args: string[], input?: string): Promise<{ tool: CliResult; ops: CliResult }> {
  const tool = await runCli(args, { env, input, timeoutMs: 30_000 });
  const ops = await runOps(args, { env, input, timeoutMs: 30_000 });
  return { tool, ops };
}

/** stderr's lines of one binary's errors, without the program's name. */
const errors = (stderr: string, program: string) =>
  stderr
    .trim()
    .split('\n')
    .filter((l) => l.startsWith(`${program}:`))
    .map((l) => l.slice(program.length));

describe("epicsperf's epics-ops commands", () => {
  it('ca get: the same lines as epics-ops, and the same errors under its own name', async () => {
    const ok = await both(['ca', 'get', '-w', '5', `${K}DOUBLE`, `${K}ENUM`, `${K}STRING`]);
    expect(ok.tool.code, ok.tool.stderr).toBe(0);
    expect(ok.tool.stdout).toBe(
      `${`${K}DOUBLE`.padEnd(30)} 3.14159\n${`${K}ENUM`.padEnd(30)} On\n${`${K}STRING`.padEnd(30)} hello epics\n`,
    );
    expect(ok.tool.stdout).toBe(ok.ops.stdout);
    const missing = await both(['ca', 'get', '-w', '0.5', 'TEST:NO:SUCH']);
    expect([missing.tool.code, missing.ops.code]).toEqual([1, 1]);
    expect(missing.tool.stderr).toBe("Channel connect timed out: 'TEST:NO:SUCH' not found.\n");
    expect(missing.tool.stderr).toBe(missing.ops.stderr);
    const bad = await both(['ca', 'get', '-d', 'NOTATYPE', `${K}LONG`]);
    expect([bad.tool.code, bad.ops.code]).toEqual([2, 2]);
    expect(errors(bad.tool.stderr, 'epicsperf')).toHaveLength(1);
    expect(errors(bad.tool.stderr, 'epicsperf')).toEqual(errors(bad.ops.stderr, 'epics-ops'));
  });

  it('snapshot --save, diff and restore: what epics-ops does with the same file', async () => {
    const file = join(dir, 'machine.snapshot');
    const saved = await runCli(['snapshot', '-', '--save', file, '--timeout', '1000'], { env, input: `${K}DOUBLE\n${K}LONG\n${K}ENUM\n` });
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/saved 3 PVs to .*: 3 answered, 0 not/);
    await Promise.all([ctx.put(K + 'LONG', 43), ctx.put(K + 'ENUM', 'Fault')]);
    try {
      const d = await both(['diff', file, '--live', '--timeout', '1000']);
      expect([d.tool.code, d.ops.code]).toEqual([1, 1]);
      expect(d.tool.stdout).toMatch(/TEST:KIND:LONG\s+different\s+42\s+43/);
      expect(d.tool.stdout).toMatch(/3 PVs: 1 equal, 2 different/);
      expect(d.tool.stdout).toBe(d.ops.stdout);
      const dry = await both(['restore', file, '--dry-run', '--timeout', '1000']);
      expect([dry.tool.code, dry.ops.code]).toEqual([1, 1]);
      expect(dry.tool.stdout).toMatch(/ENUM\s+would write\s+On\s+Fault/);
      expect(dry.tool.stdout).toBe(dry.ops.stdout);
      const refused = await both(['restore', file, '--timeout', '1000']);
      expect([refused.tool.code, refused.ops.code]).toEqual([1, 1]);
      expect(errors(refused.tool.stderr, 'epicsperf')).toEqual([
        expect.stringMatching(/nothing written: not a terminal, and --yes not given \(2 PVs would be written\)/),
      ]);
      expect(errors(refused.tool.stderr, 'epicsperf')).toEqual(errors(refused.ops.stderr, 'epics-ops'));
      expect((await ctx.get(K + 'LONG')).value).toBe(43);
      const r = await runCli(['restore', file, '--yes', '--timeout', '1000'], { env, timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/3 PVs: 2 restored, 1 already equal/);
      expect((await ctx.get(K + 'LONG')).value).toBe(42);
      expect((await ctx.get(K + 'ENUM', { form: 'time' })).value).toBe(1);
    } finally {
      await Promise.all([ctx.put(K + 'LONG', 42), ctx.put(K + 'ENUM', 1)]);
    }
  });

  it("snapshot on its built-in IOC over PVA: the rows epics-ops reads, in JSON of the tool's schema", async () => {
    const input = 'TEST:KIND:LONG\nca://TEST:KIND:STRING\n';
    const tool = await runCli(['snapshot', '-', '--ioc', 'builtin', '--protocol', 'pva', '--format', 'json'], { input });
    const ops = await runOps(['snapshot', '-', '--protocol', 'pva', '--format', 'json'], { env, input });
    expect(tool.code, tool.stderr).toBe(0);
    expect(ops.code, ops.stderr).toBe(0);
    type Out = { client: string; rows: { name: string; ok: boolean; value: unknown; severityName?: string }[] };
    const rows = (o: Out) => o.rows.map((x) => [x.name, x.ok, x.value, x.severityName]);
    const t = JSON.parse(tool.stdout) as Out;
    expect(t.client).toBe('epics-client');
    expect(rows(t).map(([name, , value]) => [name, value])).toEqual([
      ['TEST:KIND:LONG', 42],
      ['ca://TEST:KIND:STRING', 'hello epics'],
    ]);
    expect(rows(t)).toEqual(rows(JSON.parse(ops.stdout) as Out));
    expect(schemaErrors('snapshot', t)).toEqual([]);
  });
});
