// What a channel is, as cainfo tells it: native type and element count, the server that has it
// (host and port) and the access it grants; waits for the connection like any operation.
import type { ClientCircuit } from '../../ca/circuit.js';
import { NATIVE_TYPE_NAMES, type NativeTypeName } from '../../ca/constants.js';
import type { Channel } from './channel.js';
import type { ChannelManager } from './manager.js';
import { ChannelOperation } from './operation.js';
import type { CallOptions } from '../options.js';
import { checkTimeout, Pending } from '../pending.js';

export interface ChannelInfo {
  /** The PV name. */
  readonly name: string;
  /** Native type of the channel: 'string', 'short', 'float', 'enum', 'char', 'long' or 'double'. */
  readonly nativeType: NativeTypeName;
  /** The same as EPICS names it: DBF_STRING, DBF_SHORT, DBF_FLOAT, DBF_ENUM, DBF_CHAR, DBF_LONG, DBF_DOUBLE. */
  readonly dbfType: string;
  /** Element count (the maximum for an array). */
  readonly elementCount: number;
  /** The server's address and TCP port. */
  readonly host: string;
  readonly port: number;
  /** `host:port`. */
  readonly server: string;
  /** CA minor protocol version the server speaks. */
  readonly serverVersion: number;
  /** Access rights the server grants this client. */
  readonly readAccess: boolean;
  readonly writeAccess: boolean;
}

/** The info of a connected channel. */
export function channelInfo(ch: Channel, circuit: ClientCircuit): ChannelInfo {
  const t = ch.transport!;
  const nativeType = NATIVE_TYPE_NAMES[ch.nativeType] ?? 'string';
  return {
    name: ch.name,
    nativeType,
    dbfType: `DBF_${nativeType.toUpperCase()}`,
    elementCount: ch.nativeCount,
    host: t.host,
    port: t.port,
    server: `${t.host}:${t.port}`,
    serverVersion: circuit.serverVersion,
    readAccess: ch.canRead,
    writeAccess: ch.canWrite,
  };
}

/** Settles as soon as the channel is connected: nothing goes on the wire beyond the connection. */
class InfoWait extends ChannelOperation {
  constructor(
    ch: Channel,
    private readonly p: Pending<ChannelInfo>,
  ) {
    super(ch);
  }

  protected get settled(): boolean {
    return this.p.done;
  }

  protected send(ch: Channel, circuit: ClientCircuit): number {
    this.p.resolve(channelInfo(ch, circuit));
    return 0;
  }
}

/** Connect to a PV (or use its open channel) and tell what it is. */
export function infoOnce(mgr: ChannelManager, name: string, opts: CallOptions): Promise<ChannelInfo> {
  const timeout = checkTimeout(opts.timeout, name);
  const ch = mgr.acquire(name);
  const p = new Pending<ChannelInfo>(name, timeout, opts.signal, () => ch.timeoutError());
  const w = new InfoWait(ch, p);
  p.onSettle(() => {
    w.cancel();
    mgr.release(ch);
  });
  w.start();
  return p.promise;
}
