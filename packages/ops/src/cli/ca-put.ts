// The value `ca put` writes, from its command-line words as caput reads them: enums by
// state name or index, long strings as char arrays (-S), arrays with -a.
import type { Context, ChannelInfo, PutValue } from 'epics-client';
import { type CommonFlags, UsageError } from './ca-common.js';

export interface PutFlags extends CommonFlags {
  t?: boolean;
  l?: boolean;
  c?: boolean;
  s?: boolean;
  a?: boolean;
}

/** What to write: the words after the PV name, read as caput reads them. */
export async function putValue(ctx: Context, info: ChannelInfo, words: string[], o: PutFlags): Promise<PutValue> {
  if (o.a) {
    const [count, ...elements] = words;
    if (count === undefined || !/^\d+$/.test(count))
      throw new UsageError(`-a expects <count> <value> ...; '${count ?? ''}' is not a count`);
    if (elements.length === 0) throw new UsageError('-a: no values to write');
    if (Number(count) !== elements.length) throw new UsageError(`-a: the count says ${count} values, ${elements.length} given`);
    return info.nativeType === 'string' ? elements : elements.map((w) => toNumber(w, info.name));
  }
  const text = words.join(' ');
  switch (info.nativeType) {
    case 'string':
      return text;
    case 'enum':
      return enumValue(ctx, info, text, o);
    case 'char':
      if (o.S) return text;
      return toNumber(text, info.name);
    default:
      return toNumber(text, info.name);
  }
}

/** An enum: a state name or an index (-s: names only, -n: indexes only), checked against the states. */
async function enumValue(ctx: Context, info: ChannelInfo, text: string, o: PutFlags): Promise<number> {
  const states = (await ctx.get(info.name, { form: 'ctrl', timeout: o.w * 1000 })).metadata.enumStrings ?? [];
  if (!o.n) {
    const i = states.indexOf(text);
    if (i >= 0) return i;
    if (o.s) throw new UsageError(`'${text}' is not a state of ${info.name} (${states.join(', ')})`);
  }
  if (/^\d+$/.test(text) && Number(text) < Math.max(states.length, 1)) return Number(text);
  throw new UsageError(`'${text}' is neither a state nor a state index of ${info.name} (${states.map((s, i) => `${i} ${s}`).join(', ')})`);
}

function toNumber(word: string, name: string): number {
  const t = word.trim();
  const n = /^[-+]?inf(inity)?$/i.test(t)
    ? t.startsWith('-')
      ? -Infinity
      : Infinity
    : /^nan$/i.test(t)
      ? NaN
      : t === ''
        ? NaN
        : Number(t);
  if (Number.isNaN(n) && !/^nan$/i.test(t)) throw new UsageError(`'${word}' is not a number, and ${name} is numeric`);
  return n;
}
