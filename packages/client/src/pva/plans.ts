// Code made for one structure type and one set of marked fields: a monitor's updates mark the same
// fields again and again (a counter's: the value, the alarm, the timestamp), so each set gets a
// function of its own, made once, on both sides: the decoder of an update (updates.ts) and its
// encoder (values.ts). The general walk over the type stays for the rest.
import type { BitSet } from './bitset.js';
import type { StructureDesc } from './types.js';

/** Sets of marked fields compiled per type, at most (others take the general walk). */
const PLANS_PER_TYPE = 16;
/** Fields a compiled plan handles in all, at most. */
export const PLAN_FIELDS = 256;

/** The plans of one kind (a function `P` each) by type and set of marked fields. */
export interface PlanKind<P> {
  /** Per type: the plans by the marked bits' words; null where no plan can be made. */
  readonly plans: WeakMap<StructureDesc, Map<number | string, P | null>>;
  readonly compile: (desc: StructureDesc, bits: BitSet) => P | null;
  /** The plan found last, for its type and key. */
  lastDesc?: StructureDesc;
  lastKey?: number | string;
  lastPlan?: P | undefined;
}

/** A kind of plan, each made by `compile` (null: none can be made, as where code cannot be generated from strings). */
export function planKind<P>(compile: (desc: StructureDesc, bits: BitSet) => P | null): PlanKind<P> {
  return { plans: new WeakMap(), compile };
}

/** The plan of `kind` for `desc` and `bits`, made on first use; undefined: take the general walk. */
export function planOf<P>(kind: PlanKind<P>, desc: StructureDesc, bits: BitSet): P | undefined {
  const key = bits.key();
  // Monitors of one type updated one after another mark the same fields.
  if (desc === kind.lastDesc && key === kind.lastKey) return kind.lastPlan;
  let byBits = kind.plans.get(desc);
  if (!byBits) kind.plans.set(desc, (byBits = new Map()));
  let plan = byBits.get(key);
  if (plan === undefined) {
    if (byBits.size >= PLANS_PER_TYPE) return undefined;
    plan = kind.compile(desc, bits);
    byBits.set(key, plan);
  }
  kind.lastDesc = desc;
  kind.lastKey = key;
  kind.lastPlan = plan ?? undefined;
  return kind.lastPlan;
}
