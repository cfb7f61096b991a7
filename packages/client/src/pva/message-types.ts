// The shapes of every PV Access message a client exchanges, as one discriminated union, and the
// contexts of their decoding and encoding (messages.ts, messages-ops.ts, messages-session.ts).
import type { BitSet } from './bitset.js';
import type { Status } from './status.js';
import type { FieldDesc, StructureDesc, TypeCache, TypeRegistry } from './types.js';
import type { PvStructure, Typed } from './values.js';

export interface ChannelName {
  id: number;
  name: string;
}

/** Control messages (no payload: the header's size field is their datum). */
export type ControlMessage =
  | { type: 'SetByteOrder'; bigEndian: boolean }
  | { type: 'ControlEchoRequest'; data: number }
  | { type: 'ControlEchoResponse'; data: number }
  | { type: 'Control'; command: number; data: number; fromServer: boolean };

/** Client -> server. */
export type RequestMessage =
  | {
      type: 'ConnectionValidationResponse';
      bufferSize: number;
      registrySize: number;
      qos: number;
      authMethod: string;
      authData: Typed | null;
    }
  | {
      type: 'SearchRequest';
      sequenceId: number;
      flags: number;
      responseAddress: Uint8Array;
      responsePort: number;
      protocols: string[];
      channels: ChannelName[];
    }
  | { type: 'EchoRequest'; payload: Uint8Array }
  | { type: 'CreateChannelRequest'; channels: ChannelName[] }
  | { type: 'DestroyChannelRequest'; sid: number; cid: number }
  | {
      type: 'OpInitRequest';
      command: number;
      sid: number;
      requestId: number;
      subcommand: number;
      pvRequest: Typed | null;
      queueSize?: number;
    }
  | { type: 'OpRequest'; command: number; sid: number; requestId: number; subcommand: number }
  | {
      type: 'PutRequest';
      sid: number;
      requestId: number;
      subcommand: number;
      changed: BitSet;
      valueType?: StructureDesc;
      value?: PvStructure;
    }
  | { type: 'MonitorAck'; sid: number; requestId: number; nfree: number }
  /** An RPC execution: its argument, a whole typed value (null: none). */
  | { type: 'RpcRequest'; sid: number; requestId: number; subcommand: number; argument: Typed | null }
  | { type: 'GetFieldRequest'; sid: number; requestId: number; field: string }
  | { type: 'DestroyRequest'; sid: number; requestId: number }
  | { type: 'CancelRequest'; sid: number; requestId: number };

/** Server -> client. */
export type ResponseMessage =
  | { type: 'ConnectionValidationRequest'; bufferSize: number; registrySize: number; authMethods: string[] }
  | { type: 'ConnectionValidated'; status: Status }
  | {
      type: 'SearchResponse';
      guid: Uint8Array;
      sequenceId: number;
      address: Uint8Array;
      port: number;
      protocol: string;
      found: boolean;
      ids: number[];
    }
  | {
      type: 'Beacon';
      guid: Uint8Array;
      flags: number;
      sequenceId: number;
      changeCount: number;
      address: Uint8Array;
      port: number;
      protocol: string;
      serverStatus: Typed | null;
    }
  | { type: 'EchoResponse'; payload: Uint8Array }
  | { type: 'CreateChannelResponse'; cid: number; sid: number; status: Status }
  | { type: 'DestroyChannelResponse'; sid: number; cid: number }
  | { type: 'AclChange'; cid: number; permissions: number }
  | { type: 'OpInitResponse'; command: number; requestId: number; subcommand: number; status: Status; valueType: FieldDesc | null }
  /** GET replies and PUT's get-back replies: the changed bitset and the value it merged into. */
  | {
      type: 'DataResponse';
      command: number;
      requestId: number;
      subcommand: number;
      status: Status;
      changed?: BitSet;
      valueType?: StructureDesc;
      value?: PvStructure;
    }
  | { type: 'OpResponse'; command: number; requestId: number; subcommand: number; status: Status }
  /** An RPC reply: its status and, on success, the result, a whole typed value (null: none). */
  | { type: 'RpcResponse'; requestId: number; subcommand: number; status: Status; result: Typed | null }
  | {
      type: 'MonitorUpdate';
      requestId: number;
      subcommand: number;
      changed: BitSet;
      overrun?: BitSet;
      valueType?: StructureDesc;
      value?: PvStructure;
    }
  | { type: 'GetFieldResponse'; requestId: number; status: Status; valueType: FieldDesc | null }
  | { type: 'ServerMessage'; requestId: number; messageType: number; message: string };

/** A message of a command this library does not handle (ignored, not an error). */
export interface UnknownMessage {
  type: 'Unknown';
  command: number;
  flags: number;
  size: number;
}
/** A message the decoder could not accept; the caller treats it as a protocol error. */
export interface InvalidMessage {
  type: 'Invalid';
  command: number;
  reason: string;
}

export type Message = ControlMessage | RequestMessage | ResponseMessage;
export type Decoded = Message | UnknownMessage | InvalidMessage;

/**
 * An operation's data type (from its INIT reply) and, optionally, its last value (a monitor's):
 * the fields the next data does not mark come from it. It is never changed: the data is a new value.
 */
export interface Operation {
  type: StructureDesc;
  value?: PvStructure;
}

export interface DecodeContext {
  /** Types the sender defined on this connection (0xFD) for later references (0xFE). */
  types?: TypeCache;
  /** The operation a request id belongs to, to decode its data; undefined: data is skipped. */
  operation?: (requestId: number) => Operation | undefined;
}

export interface EncodeOptions {
  /** Sender-side type registry: types sent before go out as 0xFE + id. */
  registry?: TypeRegistry;
}
