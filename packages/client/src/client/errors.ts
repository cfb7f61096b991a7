// Error classes of the client, one per failure whatever the protocol (CA or PVA), each with a
// stable protocol-neutral `code`: `ERR_EPICS_*`, as Node names its own (`ERR_*`); epics-ops's
// are `ERR_EPICS_OPS_*`, the epicsperf tool's `ERR_EPICSPERF_*`.
import { ecaInfo } from '../ca/constants.js';

/** The stable code of each failure. */
export type EpicsErrorCode =
  | 'ERR_EPICS_TIMEOUT'
  | 'ERR_EPICS_DISCONNECTED'
  | 'ERR_EPICS_NOT_FOUND'
  | 'ERR_EPICS_ACCESS_DENIED'
  | 'ERR_EPICS_REMOTE'
  | 'ERR_EPICS_PROTOCOL'
  | 'ERR_EPICS_CLOSED'
  | 'ERR_EPICS_BAD_ARGUMENT'
  | 'ERR_EPICS_ABORTED'
  | TlsErrorCode;

/** Secure PV Access failures, one code each. */
export type TlsErrorCode =
  /** The server's certificate does not chain to an authority of the keychain. */
  | 'ERR_EPICS_TLS_UNTRUSTED'
  /** The server's certificate has expired (or is not valid yet). */
  | 'ERR_EPICS_TLS_EXPIRED'
  /** The server requires a client certificate and the keychain has none. */
  | 'ERR_EPICS_TLS_CERT_REQUIRED'
  /** The server refused the client's certificate. */
  | 'ERR_EPICS_TLS_REFUSED'
  /** TLS is required (pvaTlsRequired) and the server answered with plain TCP only. */
  | 'ERR_EPICS_TLS_REQUIRED'
  /** The keychain cannot be read: its file, its password or its format. */
  | 'ERR_EPICS_TLS_KEYCHAIN'
  /** Any other failure of the TLS handshake. */
  | 'ERR_EPICS_TLS';

/** Base class of every error the client reports, for Channel Access and PV Access alike. */
export class EpicsError extends Error {
  readonly code: EpicsErrorCode;
  /** The PV name the operation was about, when there is one. */
  readonly pvName: string | undefined;
  constructor(code: EpicsErrorCode, message: string, pvName?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.pvName = pvName;
  }
  override get name(): string {
    return this.constructor.name;
  }
}

/** The operation did not complete within its timeout. */
export class TimeoutError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_TIMEOUT', message, pvName);
  }
}

/** The channel's circuit was lost while the operation was in flight. */
export class DisconnectedError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_DISCONNECTED', message, pvName);
  }
}

/** No server answered the search for this name within the timeout (or a server refused it). */
export class NotFoundError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_NOT_FOUND', message, pvName);
  }
}

/** The server grants no read (or write) access to this channel. */
export class AccessDeniedError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_ACCESS_DENIED', message, pvName);
  }
}

/**
 * The server reported a failure: over CA with its ECA status code (`RemoteError.ca`), over PV
 * Access with its status type and message (`RemoteError.pva`).
 */
export class RemoteError extends EpicsError {
  /** CA: the ECA status as sent (message number << 3 | severity); PVA: the status type (1 WARNING, 2 ERROR, 3 FATAL). */
  readonly status: number;
  /** Symbolic name: ECA_PUTFAIL, PVA_ERROR, ... */
  readonly statusName: string;
  readonly protocol: 'ca' | 'pva';

  private constructor(protocol: 'ca' | 'pva', status: number, statusName: string, message: string, pvName?: string) {
    super('ERR_EPICS_REMOTE', message, pvName);
    this.protocol = protocol;
    this.status = status;
    this.statusName = statusName;
  }

  /** A Channel Access failure: its ECA status, and what else the server or the client said. */
  static ca(status: number, detail: string, pvName?: string): RemoteError {
    const info = ecaInfo(status);
    return new RemoteError('ca', status, info.name, `${info.name}: ${info.message}${detail ? ` (${detail})` : ''}`, pvName);
  }

  /** A PV Access failure: the status type (1 WARNING, 2 ERROR, 3 FATAL) and the server's message. */
  static pva(type: number, message: string, pvName?: string): RemoteError {
    const name = `PVA_${['OK', 'WARNING', 'ERROR', 'FATAL'][type] ?? type}`;
    return new RemoteError('pva', type, name, `${name}: ${message || 'the server reported a failure'}`, pvName);
  }
}

/** The server sent something that breaks the protocol; its circuit was closed. */
export class ProtocolError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_PROTOCOL', message, pvName);
  }
}

/** The Context was closed. */
export class ClosedError extends EpicsError {
  constructor(message = 'the context is closed', pvName?: string) {
    super('ERR_EPICS_CLOSED', message, pvName);
  }
}

/** The call itself is wrong: empty or oversized name, a value the channel's type cannot hold. */
export class BadArgumentError extends EpicsError {
  constructor(message: string, pvName?: string) {
    super('ERR_EPICS_BAD_ARGUMENT', message, pvName);
  }
}

/** The caller's AbortSignal fired. */
export class AbortedError extends EpicsError {
  constructor(message = 'the operation was aborted', pvName?: string, cause?: unknown) {
    super('ERR_EPICS_ABORTED', message, pvName, { cause });
  }
}

/** A Secure PV Access failure (`code` says which); `cause` is Node's TLS error when there is one. */
export class TlsError extends EpicsError {
  constructor(code: TlsErrorCode, message: string, pvName?: string, cause?: unknown) {
    super(code, message, pvName, cause === undefined ? undefined : { cause });
  }
}

/** Node's TLS error codes by what they mean for a client. */
const TLS_CODES: Array<[RegExp, TlsErrorCode, string]> = [
  [/^(CERT_HAS_EXPIRED|CERT_NOT_YET_VALID)$/, 'ERR_EPICS_TLS_EXPIRED', "the server's certificate has expired or is not valid yet"],
  [
    /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_SIGNATURE_FAILURE|CERT_UNTRUSTED|CERT_REJECTED)$/,
    'ERR_EPICS_TLS_UNTRUSTED',
    "the server's certificate is not signed by an authority of the keychain",
  ],
  [/ALERT_CERTIFICATE_REQUIRED$/, 'ERR_EPICS_TLS_CERT_REQUIRED', 'the server requires a client certificate'],
];

/** The alerts a server sends when it refuses the client's certificate, or (Java's) when the client sent none. */
const REFUSED =
  /ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_EXPIRED|CERTIFICATE_UNKNOWN|CERTIFICATE_REVOKED|ACCESS_DENIED|HANDSHAKE_FAILURE)$/;

/**
 * The TlsError of a connection that Node's TLS error `nodeCode` (with `detail`) closed; `hasCert`:
 * the client presented a certificate (without one, a refusal means that the server requires one).
 */
export function tlsErrorOf(nodeCode: string | undefined, message: string, server: string, hasCert: boolean): TlsError {
  // OpenSSL's "...:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:..." to its reason
  const detail = /SSL routines:[^:]*:([^:]+):/.exec(message)?.[1] ?? message.trim();
  if (REFUSED.test(nodeCode ?? ''))
    return hasCert
      ? new TlsError('ERR_EPICS_TLS_REFUSED', `the server refused the client's certificate (${server}: ${detail})`)
      : new TlsError('ERR_EPICS_TLS_CERT_REQUIRED', `the server requires a client certificate (${server}: ${detail})`);
  const hit = TLS_CODES.find(([re]) => re.test(nodeCode ?? ''));
  const [code, what] = hit ? [hit[1], hit[2]] : (['ERR_EPICS_TLS', 'TLS handshake failed'] as const);
  return new TlsError(code, `${what} (${server}: ${detail})`);
}
