// `epicsperf agent`: serve this host's runners and built-in IOC to orchestrators on other hosts
// over ZeroMQ with CURVE keys; `--keygen NAME` makes a key pair.
import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { curveKeyPair } from 'zeromq';
import { Agent } from '../agent/server.js';
import { DEFAULT_AGENT_PORT, ORCHESTRATOR_KEY, readKeyPair, readPublicKey, writeKeyPair } from '../hosts/wire.js';
import { epicsperfHome } from '../home.js';
import { UsageError } from '../errors.js';

interface Opts {
  keygen?: string;
  bind?: string;
  keys?: string;
  name: string;
  allow?: string[];
}

const BIND = /^tcp:\/\/(\*|[0-9.]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/;

export function register(program: Command): void {
  program
    .command('agent')
    .description(
      "serve this host's runners and built-in IOC to an orchestrator elsewhere (bench/monitor/snapshot/latency --hosts), over ZeroMQ with CURVE keys; see docs/agents.md",
    )
    .option('--bind <endpoint>', `listen here, tcp://ADDR:PORT (port ${DEFAULT_AGENT_PORT} by convention)`)
    .option('--keygen <name>', 'make a key pair NAME.key (private) and NAME.pub in the keys folder, and exit')
    .option('--keys <dir>', 'the folder of keys (default: $EPICSPERF_HOME/keys)')
    .addOption(new Option('--name <name>', "this agent's key: <keys>/NAME.key").default('agent'))
    .option('--allow <files...>', `public keys of the orchestrators it serves (default: <keys>/${ORCHESTRATOR_KEY}.pub)`)
    .action(async (opts: Opts) => {
      const keys = opts.keys ?? join(epicsperfHome(), 'keys');
      if (opts.keygen !== undefined) {
        if (opts.bind) throw new UsageError('--keygen makes a key and exits: leave out --bind');
        const { secretPath, publicPath } = writeKeyPair(keys, opts.keygen, curveKeyPair());
        process.stdout.write(`${secretPath}\n${publicPath}\n`);
        return;
      }
      if (!opts.bind) throw new UsageError('give --bind tcp://ADDR:PORT (or --keygen NAME)');
      const m = BIND.exec(opts.bind);
      if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`--bind takes tcp://ADDR:PORT, got "${opts.bind}"`);
      const own = readKeyPair(keys, opts.name);
      const allow = opts.allow ?? [join(keys, `${ORCHESTRATOR_KEY}.pub`)];
      const trusted = allow.map((f) => readPublicKey(f, 'an orchestrator key to trust'));
      const agent = new Agent({ bind: opts.bind, own, trusted });
      try {
        await agent.start();
      } catch (err) {
        await agent.close();
        throw new UsageError(`cannot listen on ${opts.bind}: ${(err as Error).message}`);
      }
      process.stderr.write(`epicsperf agent: listening on ${opts.bind} (Ctrl-C to stop)\n`);
      const stop = (): void => {
        void agent.close().then(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      await agent.closed;
    });
}
