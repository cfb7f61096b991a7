// The CA repeater's process (ca-repeater.ts): `node ca-repeater-main.js PORT`.
import { runRepeater } from './ca-repeater.js';

const port = Number(process.argv[2]);
process.title = 'ca-repeater';
if (Number.isInteger(port) && port > 0 && port < 65536) await runRepeater(port);
