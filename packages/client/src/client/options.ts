// The public options of client calls (timeout and signal, what to read, how to write) and the
// values a put accepts: types only, shared by the public API and the read and write paths.
import type { FormName, NativeTypeName } from '../ca/constants.js';
import type { GetForm } from './ca/reading.js';

export interface CallOptions {
  /** Milliseconds before the call fails with a timeout (default 5000). */
  timeout?: number;
  /** Abort the call. */
  signal?: AbortSignal;
}

export interface ReadOptions {
  /** Value type to ask the server for: 'native' (default) or a native type name (the server converts). */
  type?: 'native' | NativeTypeName;
  /**
   * Which DBR form: 'plain' (value), 'sts' (+ alarm), 'time' (default: + timestamp), 'gr'
   * (+ display metadata, no timestamp), 'ctrl' (+ control limits, no timestamp).
   */
  form?: FormName;
  /** Element count: default the current length for arrays (count 0), 1 for scalars. */
  count?: number;
  /** Decode a CHAR array as a string (a "long string"). */
  longString?: boolean;
}

export interface GetOptions extends CallOptions, Omit<ReadOptions, 'form'> {
  /**
   * A DBR form as for ReadOptions, or 'full': value, alarm, timestamp and metadata together
   * (DBR_TIME and DBR_CTRL requested at once and merged).
   */
  form?: GetForm;
}

export interface PutOptions extends CallOptions {
  /** Wait for the server to complete the write (WRITE_NOTIFY, default) or fire and forget (WRITE). */
  wait?: boolean;
}

export type PutValue = number | bigint | boolean | string | readonly string[] | readonly number[] | ArrayLike<number>;
