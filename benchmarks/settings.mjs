// The built-in IOC's settings (PREFIX:SET:1..N, docs/ioc.md) as the save/restore benchmarks change
// them: a value other than each one's starting value, of its type.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = resolve(dirname(fileURLToPath(import.meta.url)), '../packages/epicsperf/dist');
const { settingValue, SETTING_KINDS } = await import(`${DIST}/ioc/index.js`);

/** A value other than setting i's starting one, of its type. */
export function otherValue(i) {
  const v = settingValue(i);
  switch (SETTING_KINDS[i % 5]) {
    case 'ao':
      return v + 0.5;
    case 'longout':
      return v + 1_000_000;
    case 'mbbo':
      return (v + 1) % 4;
    case 'stringout':
      return `changed ${i}`;
    default:
      return v.map((x) => -x - 1);
  }
}
