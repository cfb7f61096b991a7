// What an orchestrator and an agent say to each other over ZeroMQ (docs/agents.md): one JSON frame
// per message, and a second, binary frame for a runner event's payload; the CURVE key files both
// ends read; heartbeats.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { RUNNER_TASKS } from '../clients/registry.js';

/** The wire's version: an agent answers only an orchestrator of the same (2: a runner request names its `task`). */
export const WIRE_VERSION = 2;
/** Both ends send a heartbeat this often (ms)... */
export const HEARTBEAT_MS = 1000;
/** ...and give the other up after this long without a word from it (ms). */
export const LOST_AFTER_MS = 5000;
/** How often an agent sends the readings of the processes it runs (ms). */
export const METER_MS = 250;
/** The port an agent binds unless told otherwise. */
export const DEFAULT_AGENT_PORT = 5599;
/** The orchestrator's own key is `<keys>/orchestrator.key`. */
export const ORCHESTRATOR_KEY = 'orchestrator';

/** One message: `t` says what it is; `id` pairs a request with its answer; `rid` names a runner or IOC. */
export interface Message {
  t: string;
  id?: number;
  rid?: string;
  [key: string]: unknown;
}

export function encode(m: Message, payload?: Uint8Array): Buffer[] {
  const json = Buffer.from(JSON.stringify(m));
  return payload ? [json, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)] : [json];
}

export function decode(frames: readonly Buffer[]): { m: Message; payload: Buffer | undefined } | undefined {
  try {
    const m = JSON.parse(frames[0]?.toString('utf8') ?? '') as Message;
    if (typeof m !== 'object' || m === null || typeof m.t !== 'string') return undefined;
    return { m, payload: frames[1] };
  } catch {
    return undefined;
  }
}

/**
 * Sends one message at a time on a ZeroMQ socket (a socket takes one send at a time), in order,
 * dropping what cannot be sent once the socket is closed.
 */
export class Outbox {
  private chain: Promise<void> = Promise.resolve();
  constructor(private readonly socket: { send(frames: Buffer[]): Promise<void>; readonly closed: boolean }) {}

  send(frames: Buffer[]): void {
    this.chain = this.chain.then(async () => {
      if (this.socket.closed) return;
      try {
        await this.socket.send(frames);
      } catch {
        // A closed socket or a peer gone: the heartbeats tell the rest.
      }
    });
  }

  /** Resolves when everything queued so far has been handed to the socket. */
  flushed(): Promise<void> {
    return this.chain;
  }
}

// ---- keys ----

export interface KeyPair {
  publicKey: string;
  secretKey: string;
}

const Z85_KEY = /^[0-9a-zA-Z.\-:+=^!/*?&<>()[\]{}@%$#]{40}$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function checkKeyName(name: string): void {
  if (!NAME.test(name))
    throw new UsageError(`a key's name holds letters, digits and _ . - (and starts with a letter or digit), got "${name}"`);
}

/** Write `<dir>/<name>.key` (both halves, readable by the owner only) and `<dir>/<name>.pub`. */
export function writeKeyPair(dir: string, name: string, pair: KeyPair): { secretPath: string; publicPath: string } {
  checkKeyName(name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secretPath = join(dir, `${name}.key`);
  const publicPath = join(dir, `${name}.pub`);
  if (existsSync(secretPath)) throw new UsageError(`${secretPath} exists already: remove it first to make a new key`);
  writeFileSync(
    secretPath,
    `# epicsperf CURVE key "${name}": keep this file private\npublic-key = "${pair.publicKey}"\nsecret-key = "${pair.secretKey}"\n`,
    { mode: 0o600 },
  );
  chmodSync(secretPath, 0o600);
  writeFileSync(publicPath, `# epicsperf CURVE public key "${name}": give it to the other end\npublic-key = "${pair.publicKey}"\n`);
  return { secretPath, publicPath };
}

function readKeyFile(path: string, what: string, hint: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    throw new UsageError(`${what}: ${path} cannot be read (${hint})`);
  }
}

function field(text: string, key: string, path: string): string {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, 'm').exec(text);
  if (!m || !Z85_KEY.test(m[1]!)) throw new UsageError(`${path} holds no valid ${key} (40 Z85 characters)`);
  return m[1]!;
}

/** The key pair in `<dir>/<name>.key`. */
export function readKeyPair(dir: string, name: string): KeyPair {
  const path = join(dir, `${name}.key`);
  const text = readKeyFile(path, `no key "${name}"`, `make one with \`epicsperf agent --keygen ${name} --keys ${dir}\``);
  return { publicKey: field(text, 'public-key', path), secretKey: field(text, 'secret-key', path) };
}

/** The public key in a `.pub` (or `.key`) file. */
export function readPublicKey(path: string, what: string): string {
  const text = readKeyFile(path, what, 'copy it from the host that made it');
  return field(text, 'public-key', path);
}

// ---- what an agent may be asked to run ----

/** A capture's file on an agent: a plain name, which the agent puts in a folder of its own for
 *  the run and removes with it (the orchestrator keeps the summary, not the file). */
export const CAPTURE_FILE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}\.h5$/;
const MAX_ATTRIBUTES = 64 * 1024;

/** Why a capture runner's options must be refused: each is one of the capture runner's, with a
 *  value of its kind (a plain file name, a number, a regular expression, a JSON object). */
function refuseCaptureArgs(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    if (flag === '--force') continue;
    const v = args[++i];
    if (v === undefined) return `${flag} has no value`;
    switch (flag) {
      case '--out':
        if (!CAPTURE_FILE.test(v)) return 'the capture file is a plain name ending .h5, not a path';
        break;
      case '--flush-ms':
      case '--connect-timeout-ms':
        if (!/^\d{1,9}$/.test(v)) return `${flag} is not a number`;
        break;
      case '--gap-check':
        try {
          if (v.length > 200 || /[\0\n]/.test(v)) throw new Error();
          new RegExp(v);
        } catch {
          return '--gap-check is not a regular expression of at most 200 characters';
        }
        break;
      case '--options':
      case '--environment':
        try {
          const o: unknown = JSON.parse(v);
          if (v.length > MAX_ATTRIBUTES || typeof o !== 'object' || o === null || Array.isArray(o)) throw new Error();
        } catch {
          return `${flag} is not a JSON object of at most ${MAX_ATTRIBUTES} bytes`;
        }
        break;
      default:
        return `${flag} is not an option of the capture runner`;
    }
  }
  return undefined;
}
const TOKEN = /^[A-Za-z0-9_.,:=+-]{1,200}$/;
const EPICS_VAR = /^EPICS_[A-Z0-9_]{1,60}$/;

/**
 * Why a runner request must be refused (undefined: it may run): a task of the runners, plain
 * option tokens (no paths, no spaces; a capture's options each of its kind), EPICS_* variables
 * only, and PV names.
 */
export function refuseRequest(r: Record<string, unknown>): string | undefined {
  if (typeof r.task !== 'string' || !RUNNER_TASKS.includes(r.task))
    return `task ${String(r.task)} is not one of ${RUNNER_TASKS.join(', ')}`;
  if (!Array.isArray(r.args) || !r.args.every((a) => typeof a === 'string')) return 'the task options are not words';
  if (r.task === 'capture') {
    const why = refuseCaptureArgs(r.args as string[]);
    if (why) return why;
  } else if (!r.args.every((a) => TOKEN.test(a as string))) return 'the task options hold more than plain words and numbers';
  if (typeof r.env !== 'object' || r.env === null) return 'no environment';
  for (const [k, v] of Object.entries(r.env as Record<string, unknown>)) {
    if (!EPICS_VAR.test(k) || typeof v !== 'string' || /[\0\n]/.test(v) || v.length > 1000)
      return `the environment may hold EPICS_* variables only, not ${k}`;
  }
  if (!Array.isArray(r.names) || !r.names.every((n) => typeof n === 'string' && n.length > 0 && n.length < 500 && !/[\s\0]/.test(n)))
    return 'the PV names are not plain names';
  return undefined;
}

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';

/** The bytes of a Z85 text (ZeroMQ's encoding of CURVE keys: 40 characters for 32 bytes). */
export function z85Decode(text: string): Buffer {
  if (text.length % 5 !== 0) throw new Error('Z85 text of a length not a multiple of 5');
  const out = Buffer.alloc((text.length / 5) * 4);
  for (let i = 0; i < text.length; i += 5) {
    let v = 0;
    for (let k = 0; k < 5; k++) {
      const d = Z85.indexOf(text[i + k]!);
      if (d < 0) throw new Error(`not a Z85 character: ${text[i + k]}`);
      v = v * 85 + d;
    }
    out.writeUInt32BE(v >>> 0, (i / 5) * 4);
  }
  return out;
}
