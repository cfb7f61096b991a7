// A saved snapshot of a machine's settings (a "save set"): what was read of each PV, recorded
// whether it answered or not, with the run's metadata. Every operation of this folder (save,
// compare, restore, the file formats) works on this one shape.

/**
 * A saved value: a number, a string or a boolean for a scalar; an array whole for an array. An
 * enum's value is its index (its state names are in `enumStrings`). A 64-bit integer beyond
 * Number's exact range is kept as a decimal string.
 */
export type SavedValue = number | string | boolean | number[] | string[] | boolean[];

/** One PV of a save set: what it read, or why it did not answer. */
export interface SavedPv {
  /** The name as listed (a `ca://` or `pva://` prefix kept). */
  name: string;
  /** It answered: `value` and what follows are there. */
  ok: boolean;
  /** Why it did not answer (an EPICS error code and its message), when `ok` is false. */
  error?: string;
  value?: SavedValue;
  /**
   * Its native type: over CA 'string', 'short', 'float', 'enum', 'char', 'long' or 'double';
   * over PVA the pvData scalar type ('double', 'int', 'ulong', ...) or 'enum' for an NTEnum.
   * Absent when a format does not record it.
   */
  type?: string;
  /** Element count as read (1 for a scalar). */
  count?: number;
  /** Alarm severity (0 NO_ALARM .. 3 INVALID) and status. */
  severity?: number;
  status?: number;
  /** Server timestamp, POSIX seconds and nanoseconds. */
  seconds?: number;
  nanoseconds?: number;
  units?: string;
  precision?: number;
  /** An enum's state names, by index. */
  enumStrings?: string[];
  /** Only read, never written back (Phoebus's READ_ONLY; or no write access when saved). */
  readOnly?: boolean;
  /**
   * The PV that reads back this setpoint, when the save set names one (Phoebus save-and-restore's
   * READBACK column). Recorded only, so that a Phoebus file read and written again keeps it.
   */
  readbackName?: string;
}

/** What a save set records of the run that made it. */
export interface SaveSetMeta {
  /** When the save was made (ISO 8601). */
  time?: string;
  host?: string;
  user?: string;
  /** 'ca', 'pva', or 'mixed' when both prefixes appear. */
  protocol?: string;
  comment?: string;
  labels?: string[];
  /** The format it was read from when it was not this project's ('phoebus-csv', 'psi-snap', 'autosave-sav'). */
  source?: string;
}

export interface SaveSet {
  meta: SaveSetMeta;
  pvs: SavedPv[];
}

/** A tolerance: two numbers are equal when they differ by at most the largest of these. */
export interface Tolerance {
  /** Absolute difference allowed. */
  abs?: number;
  /** Difference allowed relative to the larger magnitude of the two (0.01: 1%). */
  rel?: number;
  /** PSI snapshot's rule: `precision` x 10^-PREC of the PV (1: one unit of its last shown digit). */
  precision?: number;
}
