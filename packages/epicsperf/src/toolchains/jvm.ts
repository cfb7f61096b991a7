// The Java runners (java/): their jars resolved from Maven Central by Maven (java/pom.xml) into a
// repository of EPICSPERF_HOME, their sources compiled with the JDK, run with `java -cp`; built on
// first use, again only when a source, the pom or the JDK changes. The JDK is JAVA_HOME's, else
// the one on PATH.
import { readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { epicsperfHome, PACKAGE_ROOT } from '../home.js';
import type { LibraryStatus } from '../results/index.js';
import { buildError, buildIfChanged, findCommand, listFiles, takesHere, toolVersion } from './built.js';

const SOURCES = join(PACKAGE_ROOT, 'java');
const POM = join(SOURCES, 'pom.xml');

/** Where the built Java runners live: classes/ and lib/ (it may not exist yet). */
export function javaRunnersDir(): string {
  return join(epicsperfHome(), 'java', 'runners');
}

function jdkTool(name: string): string {
  const home = process.env.JAVA_HOME;
  return home ? join(home, 'bin', name) : findCommand(name);
}

const mvn = (): string => findCommand('mvn', process.env.MAVEN_HOME ? [join(process.env.MAVEN_HOME, 'bin', 'mvn')] : []);

/** The libraries java/pom.xml pins, artifact -> version (`core-pva` -> `5.0.5`); none without it. */
export function javaLibraries(): Record<string, string> {
  let pom: string;
  try {
    pom = readFileSync(POM, 'utf8');
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  const re = /<dependency>\s*<groupId>[^<]+<\/groupId>\s*<artifactId>([^<]+)<\/artifactId>\s*<version>([^<]+)<\/version>/g;
  for (const m of pom.matchAll(re)) out[m[1]!] = m[2]!;
  return out;
}

/** Maven's lines as progress: a file fetched into the repository (the count of them). */
function mavenProgress(): (line: string) => string | undefined {
  let fetched = 0;
  return (line) => {
    const m = /^\[INFO\] Downloaded from [^:]+: \S*\/([^/\s]+)/.exec(line);
    if (!m) return undefined;
    fetched += 1;
    return `fetched ${m[1]} (${fetched} file${fetched === 1 ? '' : 's'})`;
  };
}

/** The JDK and Maven, as `doctor` reports them. */
export async function javaToolchain(): Promise<Record<string, LibraryStatus>> {
  const [java, javac, maven] = await Promise.all([
    toolVersion(jdkTool('java'), ['-version']),
    toolVersion(jdkTool('javac'), ['-version']),
    toolVersion(mvn(), ['-v', '-B']),
  ]);
  return { java, javac, maven };
}

/**
 * Resolve the jars and compile the Java runners into `javaRunnersDir()` unless the ones there
 * are current. Resolves to the folder or a one-line reason (no JDK, no Maven, a jar Maven
 * cannot fetch, a source that does not compile), also kept for `clients` and the bench rows.
 */
export async function buildJavaRunners(): Promise<{ path: string } | { error: string }> {
  const javac = jdkTool('javac');
  const [jdk, maven] = await Promise.all([toolVersion(javac, ['-version']), toolVersion(mvn(), ['-v', '-B'])]);
  const repo = join(epicsperfHome(), 'java', 'm2');
  return buildIfChanged({
    what: 'the Java runners',
    path: javaRunnersDir(),
    folder: true,
    inputs: listFiles(SOURCES, ['target']),
    key: { jdk: jdk.version ?? jdk.error, javac, maven: maven.version ?? maven.error },
    takes: `${takesHere(50)}, most of it Maven fetching the jars`,
    steps: (out) => [
      {
        tool: 'Maven',
        command: mvn(),
        args: ['-B', '-f', POM, `-Dmaven.repo.local=${repo}`, 'dependency:copy-dependencies', `-DoutputDirectory=${join(out, 'lib')}`],
        progress: mavenProgress(),
        // Its other lines (what it fetches, copies, the build's summary); a failure's are [ERROR] lines.
        chatter: /^\[INFO\]/,
      },
      {
        tool: 'JDK',
        command: javac,
        args: [
          '-encoding',
          'UTF-8',
          '-d',
          join(out, 'classes'),
          '-cp',
          join(out, 'lib', '*'),
          ...listFiles(join(SOURCES, 'src')).filter((f) => f.endsWith('.java')),
        ],
      },
    ],
  });
}

/** Why the Java runners are not built, or undefined when they are. */
export function javaBuildError(): string | undefined {
  return buildError(javaRunnersDir());
}

/**
 * The command line of a Java runner: its main class on the built classes and jars, with the JVM's
 * defaults otherwise. java.io is opened to the runners so that they can write to fd 3 itself: the
 * orchestrator's fd 3 is one end of a socket pair (Node's stdio pipes), which the JDK cannot open
 * by number and /proc/self/fd/3 cannot reopen (java/src/epicsperf/Protocol.java).
 */
export function javaRunnerCommand(mainClass: string): { command: string; args: string[] } {
  const dir = javaRunnersDir();
  return {
    command: jdkTool('java'),
    args: ['--add-opens=java.base/java.io=ALL-UNNAMED', '-cp', [join(dir, 'classes'), join(dir, 'lib', '*')].join(delimiter), mainClass],
  };
}
