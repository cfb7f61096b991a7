// The version of epics-client this package reads with, as its package.json says.
import { readFileSync } from 'node:fs';

export function clientVersion(): string | undefined {
  try {
    const pkg = new URL('../package.json', import.meta.resolve('epics-client'));
    return (JSON.parse(readFileSync(pkg, 'utf8')) as { version?: string }).version;
  } catch {
    return undefined;
  }
}
