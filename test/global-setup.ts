// Once per test run: make sure the managed Python environment exists (first use builds it).
import { ensurePythonEnv } from '../src/pyenv/index.js';

export default async function setup(): Promise<void> {
  await ensurePythonEnv();
}
