// Validates a JSON output against packages/epicsperf/schema/*.schema.json (JSON Schema 2020-12, formats checked).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
for (const name of ['monitor', 'snapshot', 'capture', 'bench']) {
  ajv.addSchema(JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'schema', `${name}.schema.json`), 'utf8')));
}

/** The schema's complaints about `doc` (empty when it conforms). */
export function schemaErrors(kind: 'monitor' | 'snapshot' | 'capture' | 'bench', doc: unknown): string[] {
  const validate = ajv.getSchema(kind === 'bench' ? 'epicsperf/bench@2' : `epicsperf/${kind}@1`)!;
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}
