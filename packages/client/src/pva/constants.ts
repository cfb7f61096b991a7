// PV Access protocol numbers: header magic and flags, application and control commands,
// operation subcommands, status types, introspection type codes.

export const PVA_MAGIC = 0xca;
/** Protocol version this library speaks (version 2, as current servers do). */
export const PVA_VERSION = 2;
export const HEADER_SIZE = 8;
export const DEFAULT_SERVER_PORT = 5075;
export const DEFAULT_BROADCAST_PORT = 5076;

/** Bits of the header flags byte. */
export const Flags = {
  CONTROL: 0x01,
  SEGMENT_MASK: 0x30,
  SEGMENT_FIRST: 0x10,
  SEGMENT_LAST: 0x20,
  SEGMENT_MIDDLE: 0x30,
  SERVER: 0x40,
  BIG_ENDIAN: 0x80,
} as const;

/** Application message commands. */
export const Cmd = {
  BEACON: 0x00,
  CONNECTION_VALIDATION: 0x01,
  ECHO: 0x02,
  SEARCH: 0x03,
  SEARCH_RESPONSE: 0x04,
  AUTHNZ: 0x05,
  ACL_CHANGE: 0x06,
  CREATE_CHANNEL: 0x07,
  DESTROY_CHANNEL: 0x08,
  CONNECTION_VALIDATED: 0x09,
  GET: 0x0a,
  PUT: 0x0b,
  PUT_GET: 0x0c,
  MONITOR: 0x0d,
  ARRAY: 0x0e,
  DESTROY_REQUEST: 0x0f,
  PROCESS: 0x10,
  GET_FIELD: 0x11,
  MESSAGE: 0x12,
  MULTIPLE_DATA: 0x13,
  RPC: 0x14,
  CANCEL_REQUEST: 0x15,
  ORIGIN_TAG: 0x16,
} as const;

/** Control message commands (the header's size field carries their only datum). */
export const Ctrl = {
  MARK_TOTAL_BYTES_SENT: 0x00,
  ACK_TOTAL_BYTES_RECEIVED: 0x01,
  SET_BYTE_ORDER: 0x02,
  ECHO_REQUEST: 0x03,
  ECHO_RESPONSE: 0x04,
} as const;

/** Operation subcommand bits. */
export const Sub = {
  EXEC: 0x00,
  PROCESS: 0x04,
  INIT: 0x08,
  DESTROY: 0x10,
  GET: 0x40,
  /** MONITOR: pipelining in INIT, acknowledgement of freed queue slots otherwise. */
  PIPELINE: 0x80,
  /** MONITOR start (GET|PROCESS) and stop (PROCESS). */
  START: 0x44,
  STOP: 0x04,
} as const;

export const StatusType = { OK: 0, WARNING: 1, ERROR: 2, FATAL: 3 } as const;

/** First byte of an introspection description that is not a type itself. */
export const TypeCode = {
  NULL: 0xff,
  ONLY_ID: 0xfe,
  FULL_WITH_ID: 0xfd,
  FULL_TAGGED_ID: 0xfc,
} as const;

/** Connection validation quality-of-service bits. */
export const Qos = { LOW_LATENCY: 0x100, THROUGHPUT: 0x200, COMPRESSION: 0x400 } as const;
