// The runners' build on first use (toolchains/built.ts): built once, again only when an input
// changes, a failure's reason kept and nothing left to run; one build at a time (the lock), the
// others waiting and taking its result; its lines on progress (what, why, heartbeat, time); and
// the versions read from the pom.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildError, buildIfChanged, type BuildPlan, type BuildOptions } from '../../src/toolchains/built.js';
import { javaLibraries } from '../../src/toolchains/jvm.js';

let tmp: string;
afterEach(() => tmp && rmSync(tmp, { recursive: true, force: true }));

function plan(over: Partial<BuildPlan> = {}): BuildPlan {
  const src = join(tmp, 'src.txt');
  return {
    what: 'the test runners',
    path: join(tmp, 'out', 'runners'),
    folder: true,
    inputs: [src],
    key: { tool: 1 },
    // Counts its builds in a file beside the sources, and copies the source into the folder.
    steps: (out) => [{ tool: 'sh', command: 'sh', args: ['-c', `cp "${src}" "${out}/built.txt" && echo x >> "${tmp}/builds"`] }],
    ...over,
  };
}
/** Progress lines dropped. */
const quiet: BuildOptions = { progress: () => {} };
const builds = (): number => (existsSync(join(tmp, 'builds')) ? readFileSync(join(tmp, 'builds'), 'utf8').split('\n').length - 1 : 0);

describe('buildIfChanged', () => {
  it('builds once, then again only when an input or the key changes', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const first = await buildIfChanged(plan(), quiet);
    expect(first).toEqual({ path: join(tmp, 'out', 'runners') });
    expect(readFileSync(join(tmp, 'out', 'runners', 'built.txt'), 'utf8')).toBe('one');
    await buildIfChanged(plan(), quiet);
    expect(builds()).toBe(1);
    writeFileSync(join(tmp, 'src.txt'), 'two');
    await buildIfChanged(plan(), quiet);
    expect(readFileSync(join(tmp, 'out', 'runners', 'built.txt'), 'utf8')).toBe('two');
    await buildIfChanged(plan({ key: { tool: 2 } }), quiet);
    expect(builds()).toBe(3);
    expect(existsSync(join(tmp, 'out', 'runners.tmp'))).toBe(false);
  });

  it('keeps a failed build reason and removes the runners an earlier build left', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    await buildIfChanged(plan(), quiet);
    writeFileSync(join(tmp, 'src.txt'), 'broken');
    const r = await buildIfChanged(
      plan({ steps: () => [{ tool: 'sh', command: 'sh', args: ['-c', 'echo "error: it does not compile" >&2; exit 1'] }] }),
      quiet,
    );
    expect(r).toEqual({ error: 'the test runners did not build (sh): error: it does not compile' });
    expect(buildError(join(tmp, 'out', 'runners'))).toBe('the test runners did not build (sh): error: it does not compile');
    expect(existsSync(join(tmp, 'out', 'runners'))).toBe(false);
    // A good build clears the reason.
    writeFileSync(join(tmp, 'src.txt'), 'fixed');
    await buildIfChanged(plan(), quiet);
    expect(buildError(join(tmp, 'out', 'runners'))).toBeUndefined();
  });

  it('names a missing tool', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    mkdirSync(join(tmp, 'x'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const r = await buildIfChanged(plan({ steps: () => [{ tool: 'JDK', command: join(tmp, 'x', 'javac'), args: [] }] }), quiet);
    expect(r).toEqual({ error: `no JDK (${join(tmp, 'x', 'javac')} not found)` });
  });
});

/** A step that takes a while: sleeps, then leaves its output and counts its build (or fails). */
const slow = (seconds: number, fail = false): Partial<BuildPlan> => ({
  steps: (out) => [
    {
      tool: 'sh',
      command: 'sh',
      args: [
        '-c',
        `echo x >> "${tmp}/builds"; sleep ${seconds}; ` +
          (fail ? 'echo "error: it does not compile" >&2; exit 1' : `echo x > "${out}/built.txt"`),
      ],
    },
  ],
});

/** Progress options that keep the lines. */
function lines(over: BuildOptions = {}): BuildOptions & { seen: string[] } {
  const seen: string[] = [];
  return { progress: (l) => seen.push(l), pollMs: 50, ...over, seen };
}

describe('buildIfChanged, one build at a time', () => {
  it('builds once for two calls at the same time: the second waits, says so once, and takes the result', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const [a, b] = [lines(), lines()];
    const results = await Promise.all([buildIfChanged(plan(slow(1)), a), buildIfChanged(plan(slow(1)), b)]);
    const path = join(tmp, 'out', 'runners');
    expect(results).toEqual([{ path }, { path }]);
    expect(builds()).toBe(1);
    expect(readFileSync(join(path, 'built.txt'), 'utf8')).toBe('x\n');
    expect(b.seen.filter((l) => l.startsWith('waiting for the test runners'))).toEqual([
      `waiting for the test runners, which process ${process.pid} is building`,
    ]);
    expect(existsSync(path + '.lock')).toBe(false);
  });

  it('gives the waiter the failure of the build it waited for, without building again', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const results = await Promise.all([buildIfChanged(plan(slow(1, true)), lines()), buildIfChanged(plan(slow(1, true)), lines())]);
    const error = { error: 'the test runners did not build (sh): error: it does not compile' };
    expect(results).toEqual([error, error]);
    expect(builds()).toBe(1);
    // A later call (nothing to wait for) tries again.
    expect(await buildIfChanged(plan(slow(0, true)), lines())).toEqual(error);
    expect(builds()).toBe(2);
  });

  it("takes over a lock whose owner is gone (a dead process's, or a token of this pid's that it does not hold)", async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const lock = join(tmp, 'out', 'runners.lock');
    const dead = spawnSync('sh', ['-c', 'exit 0']).pid!;
    for (const owner of [`${dead} abc`, `${process.pid} not-held`]) {
      rmSync(join(tmp, 'out'), { recursive: true, force: true });
      mkdirSync(lock, { recursive: true });
      writeFileSync(join(lock, 'pid'), owner);
      const o = lines();
      expect(await buildIfChanged(plan(), o)).toEqual({ path: join(tmp, 'out', 'runners') });
      expect(o.seen.some((l) => l.startsWith('waiting'))).toBe(false);
    }
  });
});

describe('buildIfChanged, its lines', () => {
  it('says what it builds and why, a heartbeat while the tool is silent, and how long it took', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const o = lines({ heartbeatMs: 500 });
    await buildIfChanged(plan(slow(2.5)), o);
    expect(o.seen[0]).toBe('building the test runners with sh (first use)');
    const beats = o.seen.filter((l) => /^still building the test runners \(\d+s\)$/.test(l));
    expect(beats.length).toBeGreaterThanOrEqual(3);
    expect(o.seen.at(-1)).toMatch(/^built the test runners in [23]s$/);
    writeFileSync(join(tmp, 'src.txt'), 'two');
    const again = lines({ heartbeatMs: 60_000 });
    await buildIfChanged(plan({ takes: 'a few seconds here' }), again);
    expect(again.seen).toEqual([
      'building the test runners with sh (sources or toolchain changed; a few seconds here)',
      'built the test runners in 0s',
    ]);
  });

  it("shows the tool's progress lines, at most one per throttle interval, and leaves them out of a failure's reason", async () => {
    // (A crate's name may say "error": the reason is still the line of the error.)
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const o = lines({ throttleMs: 400, heartbeatMs: 60_000 });
    const r = await buildIfChanged(
      plan({
        steps: () => [
          {
            tool: 'cargo',
            command: 'sh',
            args: [
              '-c',
              'for i in $(seq 1 30); do echo "   Compiling thiserror$i v1.0.$i" >&2; sleep 0.05; done; echo "error: it does not link" >&2; exit 1',
            ],
            progress: (l) => /^\s*Compiling (\S+)/.exec(l)?.[1]?.replace(/^/, 'compiling '),
          },
        ],
      }),
      o,
    );
    expect(r).toEqual({ error: 'the test runners did not build (cargo): error: it does not link' });
    const shown = o.seen.filter((l) => l.startsWith('test runners: compiling thiserror'));
    expect(shown[0]).toMatch(/^test runners: compiling thiserror\d+$/);
    expect(shown.length).toBeGreaterThanOrEqual(2);
    expect(shown.length).toBeLessThanOrEqual(6);
    expect(o.seen.at(-1)).toMatch(
      /^could not build the test runners in \d+s: the test runners did not build \(cargo\): error: it does not link$/,
    );
  });
});

describe('javaLibraries', () => {
  it("reads each dependency's version from java/pom.xml, as the doctor reports it", () => {
    expect(javaLibraries()).toEqual({ 'core-pva': '5.0.5', jca: '2.4.11' });
  });
});
