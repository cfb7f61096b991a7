// The client's error classes: one base class for CA and PVA with protocol-neutral codes
// (ERR_EPICS_*), and a remote failure made per protocol.
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  AccessDeniedError,
  BadArgumentError,
  ClosedError,
  DisconnectedError,
  EpicsError,
  NotFoundError,
  ProtocolError,
  RemoteError,
  TimeoutError,
  type EpicsErrorCode,
} from '../../src/index.js';

describe('client errors', () => {
  const cases: Array<[EpicsError, string, EpicsErrorCode]> = [
    [new TimeoutError('t', 'PV'), 'TimeoutError', 'ERR_EPICS_TIMEOUT'],
    [new DisconnectedError('d', 'PV'), 'DisconnectedError', 'ERR_EPICS_DISCONNECTED'],
    [new NotFoundError('n', 'PV'), 'NotFoundError', 'ERR_EPICS_NOT_FOUND'],
    [new AccessDeniedError('a', 'PV'), 'AccessDeniedError', 'ERR_EPICS_ACCESS_DENIED'],
    [RemoteError.pva(2, 'no such field', 'pva://PV'), 'RemoteError', 'ERR_EPICS_REMOTE'],
    [new ProtocolError('p', 'PV'), 'ProtocolError', 'ERR_EPICS_PROTOCOL'],
    [new ClosedError(undefined, 'PV'), 'ClosedError', 'ERR_EPICS_CLOSED'],
    [new BadArgumentError('b', 'PV'), 'BadArgumentError', 'ERR_EPICS_BAD_ARGUMENT'],
    [new AbortedError(undefined, 'PV'), 'AbortedError', 'ERR_EPICS_ABORTED'],
  ];

  it.each(cases)('%s: one class per failure, a protocol-neutral code, instanceof EpicsError and Error', (err, name, code) => {
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(err.pvName).toMatch(/PV$/);
    expect(err).toBeInstanceOf(EpicsError);
    expect(err).toBeInstanceOf(Error);
  });

  it('every code is ERR_EPICS_*', () => {
    for (const [err] of cases) expect(err.code).toMatch(/^ERR_EPICS_[A-Z_]+$/);
  });

  it('a PVA failure names its status type; a CA one its ECA status', () => {
    expect(RemoteError.pva(2, 'no such field', 'pva://PV')).toMatchObject({
      message: 'PVA_ERROR: no such field',
      protocol: 'pva',
      status: 2,
      statusName: 'PVA_ERROR',
    });
    expect(RemoteError.pva(3, '', 'pva://PV').message).toBe('PVA_FATAL: the server reported a failure');
    expect(RemoteError.ca(20 << 3, '', 'PV')).toMatchObject({ protocol: 'ca', status: 20 << 3, statusName: 'ECA_PUTFAIL' });
    expect(RemoteError.ca(20 << 3, 'record disabled', 'PV').message).toMatch(/^ECA_PUTFAIL: .* \(record disabled\)$/);
  });
});
