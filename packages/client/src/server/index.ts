// A PV server for Node apps (exported as "epics-client/server"): PVs declared by the app or made
// on demand by a source, served over Channel Access and PV Access with the client's own codecs;
// structures (NTTable, any structure) and RPC services over PV Access only.
import { CaServer, type CaServerOptions } from './ca/server.js';
import { PvaServer, type PvaServerOptions } from './pva/server.js';
import type { PvProvider } from './ca/circuit.js';
import type { PvaProvider, PvaServed } from './pva/circuit.js';
import { nativeTypeOf, ServedPv, type PvDefinition, type ServedValue } from './pv.js';
import { ServedStructure, type RpcHandler, type StructureDefinition } from './structure.js';

export { ServedPv, nativeTypeOf } from './pv.js';
export type {
  Access,
  AccessRule,
  Alarm,
  Caller,
  PostOptions,
  PutHandler,
  PutOutcome,
  PutRequest,
  PvDefinition,
  PvListener,
  PvState,
  ServedValue,
} from './pv.js';
export { ServedStructure } from './structure.js';
export type {
  RpcCall,
  RpcHandler,
  RpcResult,
  StructureDefinition,
  StructureFields,
  StructureListener,
  StructurePut,
  StructurePutHandler,
  StructurePutOutcome,
} from './structure.js';
export type { PvaProvider, PvaServed } from './pva/circuit.js';
export { CaServerCircuit } from './ca/circuit.js';
export type { CircuitEvents, CircuitOptions, PvProvider } from './ca/circuit.js';
export type { CaServerOptions } from './ca/server.js';
export type { PvaServerOptions, PvaServerTls } from './pva/server.js';

export interface ServerOptions {
  /** Channel Access (false: not served). */
  ca?: CaServerOptions | false;
  /** PV Access (false: not served). */
  pva?: PvaServerOptions | false;
  /** Names not declared: a PV (or a structure, served over PV Access only) made for the name, or undefined (not this server's). */
  source?: (name: string) => ServedPv | ServedStructure | PvDefinition | undefined;
}

export class Server implements PvProvider, PvaProvider {
  private readonly pvs = new Map<string, PvaServed>();
  private ca: CaServer | undefined;
  private pva: PvaServer | undefined;

  private constructor(private readonly opts: ServerOptions) {}

  /** Start serving (CA on EPICS_CAS_SERVER_PORT, else 5064, unless options say otherwise). */
  static async start(opts: ServerOptions = {}): Promise<Server> {
    const s = new Server(opts);
    try {
      if (opts.ca !== false) s.ca = await CaServer.start(s, opts.ca);
      if (opts.pva !== false) s.pva = await PvaServer.start(s, opts.pva);
    } catch (e) {
      await s.close();
      throw e;
    }
    return s;
  }

  /** The CA port the server listens on (TCP and UDP). */
  get caPort(): number {
    return this.ca?.port ?? 0;
  }

  /** The PV Access TCP port and UDP search port. */
  get pvaPort(): number {
    return this.pva?.port ?? 0;
  }

  get pvaUdpPort(): number {
    return this.pva?.udpPort ?? 0;
  }

  /** The Secure PV Access (TLS) port; 0 without TLS. */
  get pvaTlsPort(): number {
    return this.pva?.tlsPort ?? 0;
  }

  /** Declare a PV (its type from the value unless given). */
  pv(name: string, def: Partial<PvDefinition> & { value: ServedValue }): ServedPv {
    if (this.pvs.has(name)) throw new Error(`${name} is already served`);
    const pv = new ServedPv(name, { ...def, type: def.type ?? nativeTypeOf(def.value) });
    this.pvs.set(name, pv);
    return pv;
  }

  /**
   * Declare a structure served over PV Access only: an NTTable (`id: 'epics:nt/NTTable:1.0'`,
   * `value: { labels, value: { column: [...] } }`) or any structure, with a put and an RPC handler.
   */
  structure(name: string, def: StructureDefinition): ServedStructure {
    if (this.pvs.has(name)) throw new Error(`${name} is already served`);
    const s = new ServedStructure(name, def);
    this.pvs.set(name, s);
    return s;
  }

  /** Declare an RPC service over PV Access: a channel with no value whose calls go to `handler`. */
  rpc(name: string, handler: RpcHandler): ServedStructure {
    return this.structure(name, { onRpc: handler });
  }

  /** Stop serving a PV: its clients are told the channel is gone. */
  remove(name: string): boolean {
    const pv = this.pvs.get(name);
    if (!pv) return false;
    this.pvs.delete(name);
    pv.retire();
    return true;
  }

  /** The PV of a name over Channel Access (a structure is not one). */
  find(name: string): ServedPv | undefined {
    const pv = this.findPva(name);
    return pv instanceof ServedPv ? pv : undefined;
  }

  /** The PV or structure of a name over PV Access: declared, else made by the source. */
  findPva(name: string): PvaServed | undefined {
    const pv = this.pvs.get(name);
    if (pv || !this.opts.source) return pv;
    const made = this.opts.source(name);
    if (!made) return undefined;
    const p = made instanceof ServedPv || made instanceof ServedStructure ? made : new ServedPv(name, made);
    this.pvs.set(name, p);
    return p;
  }

  async close(): Promise<void> {
    await Promise.all([this.ca?.close(), this.pva?.close()]);
  }
}
