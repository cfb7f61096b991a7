// The Java and Rust runners' build on first use (clients/built.ts): built once, again only when
// an input changes, a failure's reason kept and nothing left to run; and the versions read from
// the pom and the lock file.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildError, buildIfChanged, type BuildPlan } from '../../src/toolchains/built.js';
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
const builds = (): number => (existsSync(join(tmp, 'builds')) ? readFileSync(join(tmp, 'builds'), 'utf8').split('\n').length - 1 : 0);

describe('buildIfChanged', () => {
  it('builds once, then again only when an input or the key changes', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const first = await buildIfChanged(plan());
    expect(first).toEqual({ path: join(tmp, 'out', 'runners') });
    expect(readFileSync(join(tmp, 'out', 'runners', 'built.txt'), 'utf8')).toBe('one');
    await buildIfChanged(plan());
    expect(builds()).toBe(1);
    writeFileSync(join(tmp, 'src.txt'), 'two');
    await buildIfChanged(plan());
    expect(readFileSync(join(tmp, 'out', 'runners', 'built.txt'), 'utf8')).toBe('two');
    await buildIfChanged(plan({ key: { tool: 2 } }));
    expect(builds()).toBe(3);
    expect(existsSync(join(tmp, 'out', 'runners.tmp'))).toBe(false);
  });

  it('keeps a failed build reason and removes the runners an earlier build left', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    await buildIfChanged(plan());
    writeFileSync(join(tmp, 'src.txt'), 'broken');
    const r = await buildIfChanged(
      plan({ steps: () => [{ tool: 'sh', command: 'sh', args: ['-c', 'echo "error: it does not compile" >&2; exit 1'] }] }),
    );
    expect(r).toEqual({ error: 'the test runners did not build (sh): error: it does not compile' });
    expect(buildError(join(tmp, 'out', 'runners'))).toBe('the test runners did not build (sh): error: it does not compile');
    expect(existsSync(join(tmp, 'out', 'runners'))).toBe(false);
    // A good build clears the reason.
    writeFileSync(join(tmp, 'src.txt'), 'fixed');
    await buildIfChanged(plan());
    expect(buildError(join(tmp, 'out', 'runners'))).toBeUndefined();
  });

  it('names a missing tool', async () => {
    tmp = mkdtempSync(join(tmpdir(), 'epicsperf-built-'));
    mkdirSync(join(tmp, 'x'));
    writeFileSync(join(tmp, 'src.txt'), 'one');
    const r = await buildIfChanged(plan({ steps: () => [{ tool: 'JDK', command: join(tmp, 'x', 'javac'), args: [] }] }));
    expect(r).toEqual({ error: `no JDK (${join(tmp, 'x', 'javac')} not found)` });
  });
});

describe('javaLibraries', () => {
  it("reads each dependency's version from java/pom.xml, as the doctor reports it", () => {
    expect(javaLibraries()).toEqual({ 'core-pva': '5.0.5', jca: '2.4.11' });
  });
});
