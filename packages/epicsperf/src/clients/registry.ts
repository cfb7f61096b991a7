// The clients epicsperf measures, as declared once in the package's clients.json (read by the
// Python runners too): each one's runtime, protocol, tasks, library, description, how its
// runner starts, whether it captures, and why its runner does none of the other tasks when that is by design. Data only; clients/index.ts prepares and starts them.
import { readFileSync } from 'node:fs';
import { PACKAGE_ROOT } from '../home.js';

/** The tasks a client's runner may serve (docs/runners.md): what `tasks` declares. */
export const TASKS = ['snapshot', 'monitor', 'array', 'array-put', 'latency'] as const;
export type Task = (typeof TASKS)[number];
/** What a runner is started for: one of the tasks, or a capture (a client declared `capture`). */
export const RUNNER_TASKS: readonly string[] = [...TASKS, 'capture'];

/**
 * How a client's runner starts: a Node script of src/runners, a Python module of the
 * runners' package, a compiled program of c/ (named by the library it is built on), the main
 * class of a Java runner of java/, or the binary of a Rust runner of rust/. The C, C++, Java and
 * Rust runners are built on first use: clients/index.ts has how, for each name `c` takes, `java`
 * and `rust`.
 */
export type RunSpec =
  | { node: string; args?: string[] /** the compiled program of c/ it runs (caget-procs), as `c` names it */; caget?: string }
  | { python: string }
  | { c: string }
  | { java: string }
  | { rust: string };

export type Runtime = 'node' | 'python' | 'c' | 'java' | 'rust';
const RUNTIMES: readonly Runtime[] = ['node', 'python', 'c', 'java', 'rust'];

export interface ClientSpec {
  name: string;
  runtime: Runtime;
  protocol: 'CA' | 'PVA';
  tasks: Task[];
  description: string;
  /**
   * The library whose version identifies this client: a key of EnvironmentReport.libraries (a
   * Python distribution, an artifact of java/pom.xml, a crate of rust/Cargo.toml), or 'epicsperf'.
   */
  library: string;
  run: RunSpec;
  /** It captures to HDF5 (`epicsperf capture`, `bench capture`). */
  capture?: boolean;
  /**
   * Why its runner does none of the other tasks, when that is by design (a one-shot reader, a
   * variant of another client for one task), said in the rows of the bench workloads that need
   * them; without it, a task it does not serve is one its runner was not written for yet.
   */
  unserved?: string;
}

interface Declarations {
  /** Python distribution name -> the module imported to check it (the doctor's list). */
  pythonLibraries: Record<string, string>;
  clients: ClientSpec[];
}

/** The package's clients.json, checked: a malformed declaration is a bug of the package, said at once. */
export function readDeclarations(text = readFileSync(`${PACKAGE_ROOT}/clients.json`, 'utf8')): Declarations {
  const d = JSON.parse(text) as Declarations;
  const names = new Set<string>();
  for (const c of d.clients) {
    const bad = (why: string): never => {
      throw new Error(`clients.json: client ${JSON.stringify(c.name)}: ${why}`);
    };
    if (names.has(c.name)) bad('declared twice');
    names.add(c.name);
    if (!RUNTIMES.includes(c.runtime)) bad(`runtime ${c.runtime}`);
    if (!['CA', 'PVA'].includes(c.protocol)) bad(`protocol ${c.protocol}`);
    if ('workloads' in c) bad('"workloads" is now "tasks"');
    if (!Array.isArray(c.tasks)) bad('tasks is a list of the tasks its runner serves');
    for (const t of c.tasks) if (!TASKS.includes(t)) bad(`task ${t}`);
    if (c.unserved !== undefined && (typeof c.unserved !== 'string' || !c.unserved || TASKS.every((t) => c.tasks.includes(t))))
      bad('unserved is a reason, for a client that does not serve every task');
    if (c.runtime === 'python' && !(c.library in d.pythonLibraries)) bad(`library ${c.library} is not in pythonLibraries`);
    const kinds = RUNTIMES.filter((k) => k in c.run);
    if (kinds.length !== 1) bad(`run names one of ${RUNTIMES.join(', ')}`);
    // A Python, Java or Rust client runs a runner of its own runtime, and only they do.
    for (const r of ['python', 'java', 'rust'] as const)
      if ((c.runtime === r) !== r in c.run) bad(`runtime ${c.runtime} with a ${kinds[0] ?? '?'} runner`);
  }
  return d;
}

const DECLARED = readDeclarations();

export const CLIENTS: readonly ClientSpec[] = DECLARED.clients;

/** The client whose reads are the reference, which checks the others' values (bench/snapshot.ts): the C program on libca. */
export const REFEREE = 'c-libca';
export const PYTHON_LIBRARIES: Readonly<Record<string, string>> = DECLARED.pythonLibraries;

export function findClient(name: string): ClientSpec | undefined {
  return CLIENTS.find((c) => c.name === name);
}

export function clientNames(): string[] {
  return CLIENTS.map((c) => c.name);
}

/** The clients that capture to HDF5. */
export function captureClients(): string[] {
  return CLIENTS.filter((c) => c.capture).map((c) => c.name);
}
