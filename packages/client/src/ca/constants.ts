// Channel Access protocol constants (protocol 4.13): command ids, ports, DBR type ids,
// event masks, sizes, and the ECA status codes with their messages.

export const CA_MAJOR_PROTOCOL_REVISION = 4;
export const CA_MINOR_PROTOCOL_REVISION = 13;

export const DEFAULT_SERVER_PORT = 5064;
export const DEFAULT_REPEATER_PORT = 5065;

/** Command ids (the first uint16 of every header). */
export const Cmd = {
  VERSION: 0,
  EVENT_ADD: 1,
  EVENT_CANCEL: 2,
  READ: 3,
  WRITE: 4,
  SNAPSHOT: 5,
  SEARCH: 6,
  BUILD: 7,
  EVENTS_OFF: 8,
  EVENTS_ON: 9,
  READ_SYNC: 10,
  ERROR: 11,
  CLEAR_CHANNEL: 12,
  RSRV_IS_UP: 13,
  NOT_FOUND: 14,
  READ_NOTIFY: 15,
  READ_BUILD: 16,
  REPEATER_CONFIRM: 17,
  CREATE_CHAN: 18,
  WRITE_NOTIFY: 19,
  CLIENT_NAME: 20,
  HOST_NAME: 21,
  ACCESS_RIGHTS: 22,
  ECHO: 23,
  REPEATER_REGISTER: 24,
  SIGNAL: 25,
  CREATE_CH_FAIL: 26,
  SERVER_DISCONN: 27,
} as const;
export type CmdId = (typeof Cmd)[keyof typeof Cmd];

/** Search reply flags (the data type field of a SEARCH request). */
export const DONT_REPLY = 5;
export const DO_REPLY = 10;
/** The VERSION message of a search datagram carries a sequence number when this flag is set. */
export const SEQUENCE_NO_IS_VALID = 1;

/** Header sizes and limits. */
export const HEADER_SIZE = 16;
export const EXTENDED_HEADER_SIZE = 24;
/** Largest payload a plain 16-byte header can describe (0xFFFF marks an extended header). */
export const MAX_SMALL_PAYLOAD = 0xfffe;
/** Payloads above this (pre-4.9 limit) go out with an extended header. */
export const LEGACY_MAX_PAYLOAD = 0x3ff0;
/** Maximum UDP datagram we build (fits an Ethernet MTU). */
export const MAX_SEARCH_DATAGRAM = 1450;

export const MAX_STRING_SIZE = 40;
export const MAX_UNITS_SIZE = 8;
export const MAX_ENUM_STRING_SIZE = 26;
export const MAX_ENUM_STATES = 16;

/** Seconds between the POSIX epoch and the EPICS epoch (1990-01-01T00:00:00Z). */
export const EPICS_EPOCH_OFFSET = 631152000;

/** Native DBR type ids; STS = +7, TIME = +14, GR = +21, CTRL = +28. */
export const DbrType = {
  STRING: 0,
  SHORT: 1,
  FLOAT: 2,
  ENUM: 3,
  CHAR: 4,
  LONG: 5,
  DOUBLE: 6,
} as const;
export type NativeType = (typeof DbrType)[keyof typeof DbrType];
export const NATIVE_TYPE_NAMES = ['string', 'short', 'float', 'enum', 'char', 'long', 'double'] as const;
export type NativeTypeName = (typeof NATIVE_TYPE_NAMES)[number];

export const DbrForm = { PLAIN: 0, STS: 1, TIME: 2, GR: 3, CTRL: 4 } as const;
export type DbrFormId = (typeof DbrForm)[keyof typeof DbrForm];
export const FORM_NAMES = ['plain', 'sts', 'time', 'gr', 'ctrl'] as const;
export type FormName = (typeof FORM_NAMES)[number];

export const DBR_PUT_ACKT = 35;
export const DBR_PUT_ACKS = 36;
export const DBR_STSACK_STRING = 37;
export const DBR_CLASS_NAME = 38;
export const LAST_BUFFER_TYPE = 38;

/** Event (subscription) masks. */
export const DBE_VALUE = 1;
export const DBE_LOG = 2;
export const DBE_ARCHIVE = 2;
export const DBE_ALARM = 4;
export const DBE_PROPERTY = 8;

/** Access rights bits of ACCESS_RIGHTS. */
export const CA_ACCESS_READ = 1;
export const CA_ACCESS_WRITE = 2;

/** ECA status: (message number << 3) | severity. Severity: 0 warning, 1 success, 2 error, 3 info, 4 severe. */
const ECA_TABLE: ReadonlyArray<readonly [string, number, string]> = [
  ['ECA_NORMAL', 1, 'Normal successful completion'],
  ['ECA_MAXIOC', 2, 'Maximum simultaneous IOC connections exceeded'],
  ['ECA_UKNHOST', 2, 'Unknown internet host'],
  ['ECA_UKNSERV', 2, 'Unknown internet service'],
  ['ECA_SOCK', 2, 'Unable to allocate a new socket'],
  ['ECA_CONN', 0, 'Unable to connect to internet host or service'],
  ['ECA_ALLOCMEM', 0, 'Unable to allocate additional dynamic memory'],
  ['ECA_UKNCHAN', 0, 'Unknown IO channel'],
  ['ECA_UKNFIELD', 0, 'Record field specified inappropriate for channel specified'],
  ['ECA_TOLARGE', 0, 'The requested data transfer is greater than available memory or EPICS_CA_MAX_ARRAY_BYTES'],
  ['ECA_TIMEOUT', 0, 'User specified timeout on IO operation expired'],
  ['ECA_NOSUPPORT', 0, 'Sorry, that feature is planned but not supported at this time'],
  ['ECA_STRTOBIG', 0, 'The supplied string is unusually large'],
  ['ECA_DISCONNCHID', 2, 'The request was ignored because the specified channel is disconnected'],
  ['ECA_BADTYPE', 2, 'The data type specifed is invalid'],
  ['ECA_CHIDNOTFND', 3, 'Remote Channel not found'],
  ['ECA_CHIDRETRY', 3, 'Unable to locate all user specified channels'],
  ['ECA_INTERNAL', 6, 'Channel Access Internal Failure'],
  ['ECA_DBLCLFAIL', 0, 'The requested local DB operation failed'],
  ['ECA_GETFAIL', 0, 'Channel read request failed'],
  ['ECA_PUTFAIL', 0, 'Channel write request failed'],
  ['ECA_ADDFAIL', 0, 'Channel subscription request failed'],
  ['ECA_BADCOUNT', 0, 'Invalid element count requested'],
  ['ECA_BADSTR', 2, 'Invalid string'],
  ['ECA_DISCONN', 0, 'Virtual circuit disconnect'],
  ['ECA_DBLCHNL', 0, 'Identical process variable name on multiple servers'],
  ['ECA_EVDISALLOW', 2, 'Request inappropriate within subscription (monitor) update callback'],
  ['ECA_BUILDGET', 0, 'Database value get for that channel failed during channel search'],
  ['ECA_NEEDSFP', 0, 'Unable to initialize without the vxWorks VX_FP_TASK task option set'],
  ['ECA_OVEVFAIL', 0, 'Event queue overflow has prevented first pass event after event add'],
  ['ECA_BADMONID', 2, 'Bad event subscription (monitor) identifier'],
  ['ECA_NEWADDR', 0, 'Remote channel has new network address'],
  ['ECA_NEWCONN', 3, 'New or resumed network connection'],
  ['ECA_NOCACTX', 0, 'Specified task isnt a member of a CA context'],
  ['ECA_DEFUNCT', 6, 'Attempt to use defunct CA feature failed'],
  ['ECA_EMPTYSTR', 0, 'The supplied string is empty'],
  ['ECA_NOREPEATER', 0, 'Unable to spawn the CA repeater thread; auto reconnect will fail'],
  ['ECA_NOCHANMSG', 0, 'No channel id match for search reply; search reply ignored'],
  ['ECA_DLCKREST', 0, 'Reseting dead connection; will try to reconnect'],
  ['ECA_SERVBEHIND', 0, 'Server (IOC) has fallen behind or is not responding; still waiting'],
  ['ECA_NOCAST', 0, 'No internet interface with broadcast available'],
  ['ECA_BADMASK', 2, 'Invalid event selection mask'],
  ['ECA_IODONE', 3, 'IO operations have completed'],
  ['ECA_IOINPROGRESS', 3, 'IO operations are in progress'],
  ['ECA_BADSYNCGRP', 2, 'Invalid synchronous group identifier'],
  ['ECA_PUTCBINPROG', 2, 'Put callback timed out'],
  ['ECA_NORDACCESS', 0, 'Read access denied'],
  ['ECA_NOWTACCESS', 0, 'Write access denied'],
  ['ECA_ANACHRONISM', 2, 'Requested feature is no longer supported'],
  ['ECA_NOSEARCHADDR', 0, 'Empty PV search address list'],
  ['ECA_NOCONVERT', 0, 'No reasonable data conversion between client and server types'],
  ['ECA_BADCHID', 2, 'Invalid channel identifier'],
  ['ECA_BADFUNCPTR', 2, 'Invalid function pointer'],
  ['ECA_ISATTACHED', 0, 'Thread is already attached to a client context'],
  ['ECA_UNAVAILINSERV', 0, 'Not supported by attached service'],
  ['ECA_CHANDESTROY', 0, 'User destroyed channel'],
  ['ECA_BADPRIORITY', 2, 'Invalid channel priority'],
  ['ECA_NOTTHREADED', 2, 'Preemptive callback not enabled - additional threads may not join context'],
  ['ECA_16KARRAYCLIENT', 0, "Client's protocol revision does not support transfers exceeding 16k bytes"],
  ['ECA_CONNSEQTMO', 0, 'Virtual circuit connection sequence aborted'],
  ['ECA_UNRESPTMO', 0, 'Virtual circuit unresponsive'],
];

/** ECA status values with severity bits, by name (e.g. Eca.ECA_NORMAL === 1). */
export const Eca: Readonly<Record<string, number>> = Object.freeze(
  Object.fromEntries(ECA_TABLE.map(([name, sev], i) => [name, ((i << 3) & 0xfff8) | (sev & 7)])),
);
export const ECA_NORMAL = 1;

/** Name and message of an ECA status code (with or without severity bits). */
export function ecaInfo(status: number): { name: string; message: string; success: boolean } {
  const entry = ECA_TABLE[(status >>> 3) & 0x1fff];
  if (!entry) return { name: `ECA_${status}`, message: `Unknown CA status ${status}`, success: false };
  return { name: entry[0], message: entry[2], success: (status & 1) === 1 };
}

/** EPICS alarm severities and the common alarm status names (menuAlarmStat). */
export const SEVERITY_NAMES = ['NO_ALARM', 'MINOR', 'MAJOR', 'INVALID'] as const;
export const ALARM_STATUS_NAMES = [
  'NO_ALARM',
  'READ',
  'WRITE',
  'HIHI',
  'HIGH',
  'LOLO',
  'LOW',
  'STATE',
  'COS',
  'COMM',
  'TIMEOUT',
  'HWLIMIT',
  'CALC',
  'SCAN',
  'LINK',
  'SOFT',
  'BAD_SUB',
  'UDF',
  'DISABLE',
  'SIMM',
  'READ_ACCESS',
  'WRITE_ACCESS',
] as const;
