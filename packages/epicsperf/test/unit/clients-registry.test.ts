// The clients are declared once, in packages/epicsperf/clients.json: every declaration has its
// runner (a Node script, a Python module, a C program, a capture class) and every runner its
// declaration; a malformed declaration is refused with the client's name. Reads files, runs nothing.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLIENTS, findClient, readDeclarations, TASKS, type ClientSpec } from '../../src/clients/registry.js';
import { whyNoLatency } from '../../src/bench/latency.js';
import { javaLibraries } from '../../src/toolchains/jvm.js';
import { SERVERS } from '../../src/servers/registry.js';

const PKG = join(import.meta.dirname, '..', '..');
const NODE_RUNNERS = join(PKG, 'src', 'runners');
const PY_RUNNERS = join(PKG, 'python', 'epicsperf_runners', 'runners');
const JAVA_SOURCES = join(PKG, 'java', 'src');
/** The source file of a Java main class (epicsperf.CajRunner -> java/src/epicsperf/CajRunner.java). */
const javaSource = (mainClass: string): string => join(JAVA_SOURCES, ...mainClass.split('.')) + '.java';

describe('the client declarations', () => {
  it('every declared client has its runner', () => {
    const missing: string[] = [];
    for (const c of CLIENTS) {
      const run = c.run;
      if ('node' in run && !existsSync(join(NODE_RUNNERS, run.node.replace(/\.js$/, '.ts')))) missing.push(`${c.name}: ${run.node}`);
      if ('node' in run && c.capture && !existsSync(join(NODE_RUNNERS, 'node-capture.ts'))) missing.push(`${c.name}: node-capture.js`);
      if ('python' in run && !existsSync(join(PY_RUNNERS, `${run.python}.py`))) missing.push(`${c.name}: runners/${run.python}.py`);
      if ('c' in run && !existsSync(join(PKG, 'c'))) missing.push(`${c.name}: c/`);
      if ('java' in run && !existsSync(javaSource(run.java))) missing.push(`${c.name}: ${run.java}`);
      // A Java client's library is an artifact of java/pom.xml, whose version the doctor reports.
      if (c.runtime === 'java' && !(c.library in javaLibraries())) missing.push(`${c.name}: ${c.library} in java/pom.xml`);
    }
    expect(missing).toEqual([]);
    const capturing = readFileSync(join(PKG, 'python', 'epicsperf_runners', 'capture_clients.py'), 'utf8');
    for (const c of CLIENTS.filter((x) => x.capture && x.runtime === 'python')) expect(capturing, c.name).toContain(`"${c.name}": `);
  });

  it('every runner has its declaration', () => {
    const declared = new Set(CLIENTS.flatMap((c) => ('node' in c.run ? [c.run.node] : 'python' in c.run ? [`${c.run.python}.py`] : [])));
    // The Node capture runner serves the Node clients declared `capture`.
    if (CLIENTS.some((c) => c.capture && 'node' in c.run)) declared.add('node-capture.js');
    // Node runners are the scripts that announce themselves ready as a client (a server runner, of
    // src/servers/, names the server it is); the others are their parts.
    const nodeRunners = readdirSync(NODE_RUNNERS)
      .filter((f) => {
        const src = f.endsWith('.ts') ? readFileSync(join(NODE_RUNNERS, f), 'utf8') : '';
        return src.includes("ev: 'ready'") && !src.includes("ev: 'ready', server:");
      })
      .map((f) => f.replace(/\.ts$/, '.js'));
    const pyRunners = readdirSync(PY_RUNNERS).filter((f) => f.endsWith('.py') && !['__init__.py', 'base.py'].includes(f));
    expect([...nodeRunners, ...pyRunners].filter((f) => !declared.has(f))).toEqual([]);
    // Java runners are the classes with a main method that speak the runners' protocol (Protocol.java);
    // TlsServer, a server for the Secure PV Access tests, does not.
    const javaDeclared = new Set([
      ...CLIENTS.flatMap((c) => ('java' in c.run ? [javaSource(c.run.java)] : [])),
      // The server runners in Java (src/servers/registry.ts).
      ...SERVERS.flatMap((s) => (s.runtime === 'java' ? [javaSource(s.main!)] : [])),
    ]);
    const javaRunners = readdirSync(JAVA_SOURCES, { recursive: true, encoding: 'utf8' })
      .map((f) => join(JAVA_SOURCES, f))
      .filter((f) => {
        const src = f.endsWith('.java') ? readFileSync(f, 'utf8') : '';
        return src.includes('public static void main(') && src.includes('epicsperf.Protocol.');
      });
    expect(javaRunners.length).toBeGreaterThan(1);
    expect(javaRunners.filter((f) => !javaDeclared.has(f))).toEqual([]);
  });

  it('a malformed declaration is refused, naming the client', () => {
    const base = {
      name: 'x',
      runtime: 'python',
      protocol: 'CA',
      tasks: ['snapshot'],
      library: 'lib',
      description: 'd',
      run: { python: 'x' },
    };
    const doc = (...clients: object[]) => JSON.stringify({ pythonLibraries: { lib: 'lib' }, clients });
    expect(readDeclarations(doc(base)).clients).toHaveLength(1);
    expect(() => readDeclarations(doc(base, base))).toThrow('client "x": declared twice');
    expect(() => readDeclarations(doc({ ...base, tasks: ['fly'] }))).toThrow('client "x": task fly');
    expect(() => readDeclarations(doc({ ...base, tasks: undefined, workloads: ['snapshot'] }))).toThrow(
      'client "x": "workloads" is now "tasks"',
    );
    expect(() => readDeclarations(doc({ ...base, tasks: 'snapshot' }))).toThrow('client "x": tasks is a list');
    expect(() => readDeclarations(doc({ ...base, library: 'nope' }))).toThrow('library nope is not in pythonLibraries');
    expect(() => readDeclarations(doc({ ...base, run: { node: 'x.js' } }))).toThrow('runtime python with a node runner');
    expect(() => readDeclarations(doc({ ...base, runtime: 'java', run: { python: 'x' } }))).toThrow('runtime java with a python runner');
    expect(() => readDeclarations(doc({ ...base, runtime: 'rust', run: { java: 'X' } }))).toThrow('runtime rust with a java runner');
    expect(() => readDeclarations(doc({ ...base, run: { python: 'x', rust: 'y' } }))).toThrow('run names one of');
    expect(readDeclarations(doc({ ...base, unserved: 'a one-shot reader' })).clients[0]!.unserved).toBe('a one-shot reader');
    expect(() => readDeclarations(doc({ ...base, unserved: '' }))).toThrow('client "x": unserved is a reason');
    expect(() => readDeclarations(doc({ ...base, unserved: true }))).toThrow('client "x": unserved is a reason');
    expect(() => readDeclarations(doc({ ...base, tasks: TASKS, unserved: 'r' }))).toThrow('does not serve every task');
  });

  it("a workload's row for a client that does not serve it says what the declaration does, whatever the client's name", () => {
    const spec = (over: Partial<ClientSpec>): ClientSpec => ({ ...findClient('caget-procs')!, ...over });
    expect(whyNoLatency(findClient('caget-procs')!)).toBe('a one-shot reader: it neither puts nor monitors');
    expect(whyNoLatency(spec({ name: 'another-reader', unserved: 'one read per process' }))).toBe('one read per process');
    expect(whyNoLatency(spec({ unserved: undefined, library: 'lib' }))).toBe(
      'its runner does not put yet (lib can put and monitor; not measured here)',
    );
    for (const c of CLIENTS.filter((x) => !x.tasks.includes('latency')))
      expect(whyNoLatency(c), c.name).toBe(
        c.unserved ?? `its runner does not put yet (${c.library} can put and monitor; not measured here)`,
      );
  });
});
