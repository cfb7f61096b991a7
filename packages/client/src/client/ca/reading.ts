// The public types of a read, one per DBR form: what each form carries is typed as present and
// what it does not carry (a timestamp outside TIME, alarm in the plain form) as undefined.
import type { FormName } from '../../ca/constants.js';
import type { DbrMetadata, Reading } from '../../ca/dbr.js';

/** The form of a get: a DBR form, or 'full' (TIME and CTRL requested together and merged). */
export type GetForm = FormName | 'full';

/** What a reading of a form without time has in place of the timestamp. @inline */
interface NoTime {
  readonly timestamp: undefined;
  readonly posixSeconds: undefined;
  readonly secondsPastEpoch: undefined;
  readonly nanoseconds: undefined;
}

/** The timestamp of a TIME form. @inline */
interface Timed {
  /** The server's timestamp (millisecond precision). */
  readonly timestamp: Date;
  /** The timestamp as POSIX seconds (a float). */
  readonly posixSeconds: number;
  readonly secondsPastEpoch: number;
  readonly nanoseconds: number;
}

/** The alarm of forms from STS up. @inline */
interface Alarm {
  readonly status: number;
  readonly severity: number;
}

/** DBR_xxx: the value alone. */
export type PlainReading = Reading &
  NoTime & { readonly form: 'plain'; readonly status: undefined; readonly severity: undefined; readonly metadata: undefined };
/** DBR_STS_xxx: value and alarm. */
export type StsReading = Reading & NoTime & Alarm & { readonly form: 'sts'; readonly metadata: undefined };
/** DBR_TIME_xxx: value, alarm and timestamp. */
export type TimeReading = Reading & Timed & Alarm & { readonly form: 'time'; readonly metadata: undefined };
/** DBR_GR_xxx: value, alarm and display metadata (no timestamp). */
export type GrReading = Reading & NoTime & Alarm & { readonly form: 'gr'; readonly metadata: DbrMetadata };
/** DBR_CTRL_xxx: value, alarm, display and control metadata (no timestamp). */
export type CtrlReading = Reading & NoTime & Alarm & { readonly form: 'ctrl'; readonly metadata: DbrMetadata };
/** A 'full' get: the TIME reading's value, alarm and timestamp with the CTRL reading's metadata. */
export type FullReading = Reading & Timed & Alarm & { readonly form: 'time'; readonly metadata: DbrMetadata };

/** A reading of any form. */
export type AnyReading = PlainReading | StsReading | TimeReading | GrReading | CtrlReading;

/** The reading of each form. @inline */
interface ByForm {
  plain: PlainReading;
  sts: StsReading;
  time: TimeReading;
  gr: GrReading;
  ctrl: CtrlReading;
  full: FullReading;
}

/** The reading a form gives (a union of forms gives the union of readings). */
export type ReadingOf<F extends GetForm> = ByForm[F];
