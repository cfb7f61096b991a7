// Validates a JSON output against packages/epicsperf/schema/*.schema.json (JSON Schema 2020-12, formats checked),
// the schemas generated from the result types (scripts/schemas.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** The folder of the shipped schemas. */
export const SCHEMA_DIR = join(import.meta.dirname, '..', '..', 'schema');

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv);
for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'))) {
  ajv.addSchema(JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')), file.replace('.schema.json', ''));
}

/** The schema's complaints about `doc` (empty when it conforms). */
export function schemaErrors(kind: 'monitor' | 'snapshot' | 'capture' | 'bench', doc: unknown): string[] {
  const validate = ajv.getSchema(kind)!;
  if (validate(doc)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}
