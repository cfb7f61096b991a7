// epics-ops's `snapshot --save`, `diff` and `restore` end to end on the test IOC (with its access
// security), over CA and PVA: the file keeps what was read (a missing PV too), diff against the
// live machine finds exactly what changed, restore off a terminal writes nothing without --yes
// and puts everything back with it, and bad input gets one line and exit 2.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIoc, type Ioc } from 'epicsperf-testkit/ioc';
import { contextFor, setGate } from 'epicsperf-testkit/client-helpers';
import { errorLines, OPS_BIN, runOps } from 'epicsperf-testkit/cli';

let ioc: Ioc;
let ctx: ReturnType<typeof contextFor>;
let dir: string;
const K = 'TEST:KIND:';
beforeAll(async () => {
  ioc = await startIoc({ records: 2, rate: 10, arrayElements: 0, accessSecurity: true });
  ctx = contextFor(ioc.env);
  dir = mkdtempSync(join(tmpdir(), 'epics-ops-saveset-'));
});

afterAll(async () => {
  await ctx?.close();
  await ioc?.stop();
});

const cli = (args: string[], input?: string) => runOps(args, { env: ioc.env, input, timeoutMs: 30_000 });

describe.each([
  ['ca', ''],
  ['pva', 'pva://'],
] as const)('over %s', (proto, prefix) => {
  const pv = (k: string): string => prefix + K + k;
  const list = () => {
    const p = join(dir, `${proto}.txt`);
    writeFileSync(p, ['DOUBLE', 'LONG', 'ENUM', 'STRING', 'ARR:FLOAT', 'GATED'].map(pv).join('\n') + `\n${prefix}TEST:NO:SUCH\n`);
    return p;
  };

  it('save, change, diff --live, restore without --yes (nothing), with --yes (all back), diff again', async () => {
    const file = join(dir, `${proto}.snapshot`);
    const saved = await cli([
      'snapshot',
      list(),
      '--save',
      file,
      '--timeout',
      '1000',
      '--comment',
      'golden',
      '--label',
      'run-1',
      '--label',
      'shift-b',
    ]);
    expect(saved.code).toBe(1); // the missing PV
    expect(saved.stdout).toMatch(/saved 7 PVs to .*: 6 answered, 1 not/);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({
      format: 'epicsperf-snapshot',
      version: 1,
      protocol: proto,
      comment: 'golden',
      labels: ['run-1', 'shift-b'],
      pvs: 7,
    });
    expect(JSON.parse(lines[1]!)).toMatchObject({ name: pv('DOUBLE'), value: 3.14159, type: 'double', units: 'mm', precision: 4 });
    expect(JSON.parse(lines[7]!)).toMatchObject({ name: `${prefix}TEST:NO:SUCH`, error: expect.stringMatching(/TIMEOUT|NOT_FOUND/) });

    await Promise.all([
      ctx.put(K + 'DOUBLE', 3.2),
      ctx.put(K + 'ENUM', 'Fault'),
      ctx.put(K + 'ARR:FLOAT', [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 7]),
    ]);
    try {
      const d = await cli(['diff', file, '--live', '--timeout', '1000', '--format', 'json']);
      expect(d.code).toBe(1);
      const dj = JSON.parse(d.stdout) as { summary: Record<string, number>; pvs: { name: string; status: string }[] };
      expect(
        dj.pvs
          .filter((p) => p.status === 'different')
          .map((p) => p.name)
          .sort(),
      ).toEqual(['ARR:FLOAT', 'DOUBLE', 'ENUM'].map(pv).sort());
      expect(dj.summary).toMatchObject({ total: 7, equal: 3, different: 3, notConnected: 1 });
      // Forgiven by a per-PV tolerance and an absolute one; the table names the rest.
      const loose = await cli(['diff', file, '--live', '--timeout', '1000', '--abs', '0.1', '--tolerance', 'ARR=abs:10']);
      expect(loose.code).toBe(1);
      expect(loose.stdout).toMatch(/ENUM\s+different\s+On\s+Fault/);
      expect(loose.stdout).not.toMatch(/DOUBLE\s+different/);
      expect(loose.stdout).toMatch(/7 PVs: 5 equal, 1 different, 1 not connected/);
      const one = await cli(['diff', file, '--live', '--timeout', '1000', '--only', 'DOUBLE$', '--format', 'json']);
      expect(JSON.parse(one.stdout).summary).toMatchObject({ total: 1, different: 1 });
      const md = await cli(['diff', file, '--live', '--timeout', '1000', '--format', 'markdown']);
      expect(md.stdout).toMatch(/^\| name \| status \|/);

      const refused = await cli(['restore', file, '--timeout', '1000']);
      expect(refused.code).toBe(1);
      expect(errorLines(refused.stderr, 'epics-ops')).toEqual([
        expect.stringMatching(/nothing written: not a terminal, and --yes not given \(3 PVs would be written\)/),
      ]);
      expect((await ctx.get(K + 'DOUBLE')).value).toBe(3.2);
      const dry = await cli(['restore', file, '--dry-run', '--timeout', '1000']);
      expect(dry.code).toBe(1);
      expect(dry.stdout).toMatch(/DOUBLE\s+would write\s+3\.14159\s+3\.2/);
      expect((await ctx.get(K + 'DOUBLE')).value).toBe(3.2);

      const only = await cli(['restore', file, '--yes', '--only', 'DOUBLE$', '--timeout', '1000']);
      expect(only.code).toBe(0);
      expect(only.stdout).toMatch(/1 PVs: 1 restored/);
      expect((await ctx.get(K + 'ENUM', { form: 'time' })).value).toBe(2);

      const r = await cli(['restore', file, '--yes', '--timeout', '1000', '--format', 'json']);
      expect(r.code).toBe(0);
      const rj = JSON.parse(r.stdout) as { summary: Record<string, number>; pvs: { name: string; outcome: string; code?: string }[] };
      expect(rj.summary).toMatchObject({ selected: 7, restored: 2, equal: 4, skipped: 1, failed: 0, notWritten: 0 });
      expect(rj.pvs.find((p) => p.name === `${prefix}TEST:NO:SUCH`)).toMatchObject({ outcome: 'skipped', code: 'not-saved' });
      const after = await cli(['diff', file, '--live', '--timeout', '1000', '--format', 'json']);
      expect(JSON.parse(after.stdout).summary).toMatchObject({ equal: 6, different: 0, notConnected: 1 });
    } finally {
      await Promise.all([
        ctx.put(K + 'DOUBLE', 3.14159),
        ctx.put(K + 'ENUM', 1),
        ctx.put(K + 'ARR:FLOAT', [0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5]),
      ]);
    }
  });

  it('a PV without write access is skipped and the exit says the machine is not all restored', async () => {
    const file = join(dir, `${proto}-gated.snapshot`);
    expect((await cli(['snapshot', '-', '--save', file, '--timeout', '1000'], `${pv('GATED')}\n`)).code).toBe(0);
    await ctx.put(K + 'GATED', 9);
    await setGate(ctx, K, false);
    try {
      const r = await cli(['restore', file, '--yes', '--timeout', '1000']);
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/GATED\s+skipped\s+5\s+9\s+no write access/);
      expect((await ctx.get(K + 'GATED')).value).toBe(9);
    } finally {
      await setGate(ctx, K, true);
      await ctx.put(K + 'GATED', 5);
    }
  });
});

describe('files', () => {
  it('saves compare equal across formats (Phoebus CSV, PSI .snap and autosave .sav written by --save), and differ after a change', async () => {
    const names = ['DOUBLE', 'LONG', 'ENUM', 'STRING', 'ARR:DOUBLE'].map((k) => K + k).join('\n') + '\n';
    const a = join(dir, 'a.snapshot'),
      b = join(dir, 'b.csv'),
      c = join(dir, 'c.snap'),
      e = join(dir, 'e.sav');
    for (const f of [a, b, c, e]) expect((await cli(['snapshot', '-', '--save', f, '--timeout', '1000'], names)).code).toBe(0);
    expect(readFileSync(b, 'utf8')).toMatch(/^PV,/m);
    expect(readFileSync(c, 'utf8')).toMatch(/^#/);
    expect(readFileSync(e, 'utf8')).toMatch(/<END>\n$/);
    for (const [x, y] of [
      [a, b],
      [a, c],
      [b, c],
      [a, e],
    ]) {
      const d = await cli(['diff', x!, y!]);
      expect(d.stdout + d.stderr).toMatch(/5 PVs: 5 equal, 0 different/);
      expect(d.code).toBe(0);
    }
    await ctx.put(K + 'LONG', 44);
    try {
      expect((await cli(['snapshot', '-', '--save', c, '--timeout', '1000'], names)).code).toBe(0);
      const d = await cli(['diff', a, c]);
      expect(d.code).toBe(1);
      expect(d.stdout).toMatch(/TEST:KIND:LONG\s+different\s+42\s+44\s+2/);
      const some = await cli(['diff', a, c, '--only', 'STRING|ENUM']);
      expect(some.code).toBe(0);
      expect(some.stdout + some.stderr).toMatch(/2 PVs: 2 equal, 0 different/);
    } finally {
      await ctx.put(K + 'LONG', 42);
    }
  });

  it('Ctrl-C during a restore: it stops waiting, reads back, and reports what was written', async () => {
    // KIND:SLOW's put completes 3 s late; LONG's at once.
    const file = join(dir, 'slow.snapshot');
    expect((await cli(['snapshot', '-', '--save', file, '--timeout', '1000'], `${K}SLOW\n${K}LONG\n`)).code).toBe(0);
    await Promise.all([ctx.put(K + 'SLOW', 2.5, { timeout: 10_000 }), ctx.put(K + 'LONG', 45)]);
    try {
      const child = spawn(process.execPath, [OPS_BIN, 'restore', file, '--yes', '--timeout', '10000', '--format', 'json'], {
        env: { ...process.env, ...ioc.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '',
        err = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const t0 = Date.now();
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (/writing 2 PVs/.test(err)) resolve();
        });
        child.on('close', () => reject(new Error(`restore ended before writing: ${err}`)));
      });
      await new Promise((r) => setTimeout(r, 300));
      child.kill('SIGINT');
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(130);
      expect(Date.now() - t0).toBeLessThan(2900); // did not wait for SLOW's completion
      expect(err).toMatch(/interrupted: finishing what was sent and reading back/);
      const rep = JSON.parse(out) as { interrupted: boolean; pvs: { name: string; outcome: string; reason?: string }[] };
      expect(rep.interrupted).toBe(true);
      // Both were sent: the read-back finds both written (SLOW's value is set at once, its completion comes late).
      expect(rep.pvs.find((p) => p.name === K + 'LONG')).toMatchObject({ outcome: 'restored' });
      expect(rep.pvs.find((p) => p.name === K + 'SLOW')).toMatchObject({ outcome: 'restored', reason: 'written before the interruption' });
      expect((await ctx.get(K + 'SLOW')).value).toBe(1);
    } finally {
      await ctx.put(K + 'LONG', 42);
      await ctx.put(K + 'SLOW', 1, { timeout: 10_000 });
    }
  });

  it('on a terminal, restore shows the changes and asks: no writes nothing, yes writes', async () => {
    const file = join(dir, 'tty.snapshot');
    expect((await cli(['snapshot', '-', '--save', file, '--timeout', '1000'], `${K}LONG\n${K}STRING\n`)).code).toBe(0);
    await ctx.put(K + 'LONG', 46);
    // script(1) runs the command on a pseudo-terminal: stdin and stdout are a terminal there.
    const onTty = (answer: string) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const cmd = [process.execPath, OPS_BIN, 'restore', file, '--timeout', '1000'].map((a) => `'${a}'`).join(' ');
        const child = spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, ...ioc.env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (/write these 1 PVs\? \[y\/N\]/.test(out) && answer) {
            child.stdin.write(`${answer}\n`);
            answer = '';
          }
        });
        child.on('close', (code) => resolve({ code, out }));
      });
    try {
      const no = await onTty('n');
      expect(no.out).toMatch(/TEST:KIND:LONG\s+46\s+42/);
      expect(no.out).toMatch(/not written/);
      expect(no.code).toBe(1);
      expect((await ctx.get(K + 'LONG')).value).toBe(46);
      const yes = await onTty('y');
      expect(yes.out).toMatch(/2 PVs: 1 restored, 1 already equal/);
      expect(yes.code).toBe(0);
      expect((await ctx.get(K + 'LONG')).value).toBe(42);
    } finally {
      await ctx.put(K + 'LONG', 42);
    }
  });

  it('bad input: one line and exit 2', async () => {
    const bad = join(dir, 'bad.snapshot');
    writeFileSync(bad, '{"format":"epicsperf-snapshot","version":1,"pvs":1}\n{"name":"X","value":\n');
    const req = join(dir, 'x.req');
    writeFileSync(req, 'TEST:KIND:LONG\n');
    const cases: [string[], RegExp][] = [
      [['diff', join(dir, 'nope.snapshot'), '--live'], /cannot read snapshot .*nope\.snapshot: no such file/],
      [['diff', bad, '--live'], /bad\.snapshot line 2: not a JSON object/],
      [['restore', req, '--yes'], /x\.req is an autosave request file/],
      [['diff', bad], /diff needs a second snapshot or --live/],
      [['restore', bad, '--only', '('], /--only: not a regular expression/],
      [['diff', bad, bad, '--tolerance', 'x=abs'], /expected abs:N, rel:N or precision:N/],
      [['snapshot', '-', '--save', join(dir, 'no', 'such', 'dir.snapshot'), '--timeout', '1000'], /cannot write .*dir\.snapshot: ENOENT/],
      [['diff', 'test/fixtures/saveset/truncated.sav', '--live'], /truncated\.sav.*<END>/],
      [['restore', 'test/fixtures/saveset/psi-bad-value.snap', '--yes'], /psi-bad-value\.snap line \d+: /],
      [['diff', 'test/fixtures/saveset/phoebus-bad-columns.csv', 'test/fixtures/saveset/psi.snap'], /phoebus-bad-columns\.csv line \d+: /],
    ];
    for (const [args, msg] of cases) {
      const r = await cli(args, 'TEST:KIND:LONG\n');
      expect(r.code, args.join(' ')).toBe(2);
      expect(errorLines(r.stderr, 'epics-ops'), args.join(' ')).toEqual([expect.stringMatching(msg)]);
      expect(r.stderr, args.join(' ')).not.toMatch(/\n\s+at /);
    }
  });
});
