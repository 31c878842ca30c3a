// Reads of one shape compile to one statement. Two requests with the same path (entity set,
// navigation), the same query options and the same caller differ only in the keys of the path
// and the service root, and the statement takes those as parameters. A plan keeps the bound
// read and its statement with those parameters as slots, so a repeated read skips parsing,
// binding and compiling (about 20 µs of a key lookup's server CPU: README, Performance).
//
// A shape is planned the second time it is read (a query seen once, as a client composing
// filters sends many, costs no more than before), by compiling it once more for made-up keys
// and root. The plan is kept only when the two statements are the same text and their
// parameters differ exactly where an input went in, as the input itself or followed by a
// fixed text (the context URL is the root followed by `$metadata#…`). A key that a statement
// uses any other way (in its text, twice, in an array) leaves the shape unplanned, and its
// reads compile every time as before. Plans belong to the caller's access context, because
// binding checks its permissions; a change of roles gives the caller a new context and so new
// plans.

import type { AccessContext } from '../../auth/access-context.ts'
import { newGuid } from '../../persistence/guid.ts'
import type { BoundEntityRead } from '../semantic/bound.ts'

/** A read ready to run: its statement, and what finishing its body needs. */
export interface PlannedRead {
  readonly single: boolean
  readonly read: BoundEntityRead
  readonly sql: string
  readonly params: readonly unknown[]
  /** @odata.context of the answer: the service root followed by a fixed text. */
  readonly context: string
  readonly nextSkip?: number
  /** The most rows the statement returns, when known. */
  readonly maxRows?: number
}

/** What a statement of one shape takes from the request: the path's keys and the service root. */
export interface ReadInputs {
  readonly keys: readonly string[]
  readonly root: string
}

/** A parameter made of an input (an index into keys, then root) followed by `suffix`. */
interface Slot {
  readonly index: number
  readonly input: number
  readonly suffix: string
}

interface Plan {
  readonly read: PlannedRead
  readonly slots: readonly Slot[]
  /** What follows the root in the context URL. */
  readonly contextSuffix: string
}

/** Shapes remembered per caller; a caller with more starts over (a client generating queries). */
const PLANS_PER_CALLER = 256

/** A shape read once so far; the next read plans it. */
const SEEN = 'seen'

export class ReadPlans {
  /** null: the shape's statement does not take its inputs as plain parameters. */
  readonly #byCaller = new WeakMap<AccessContext, Map<string, Plan | null | typeof SEEN>>()

  /** The read of `shape` with `inputs`: from its plan, or compiled (and planned, on its second read). */
  read(access: AccessContext | undefined, shape: string, inputs: ReadInputs, compile: (inputs: ReadInputs) => PlannedRead): PlannedRead {
    if (!access) return compile(inputs)
    let plans = this.#byCaller.get(access)
    if (!plans) this.#byCaller.set(access, (plans = new Map()))
    const plan = plans.get(shape)
    if (plan && plan !== SEEN) return fill(plan, inputs)
    const read = compile(inputs)
    if (plan === undefined) {
      if (plans.size >= PLANS_PER_CALLER) plans.clear()
      plans.set(shape, SEEN)
    } else if (plan === SEEN) {
      plans.set(shape, planOf(read, inputs, compile))
    }
    return read
  }
}

function planOf(read: PlannedRead, inputs: ReadInputs, compile: (inputs: ReadInputs) => PlannedRead): Plan | null {
  const made: ReadInputs = { keys: inputs.keys.map(() => newGuid()), root: `urn:plan:${newGuid()}/` }
  let probe: PlannedRead
  try {
    probe = compile(made)
  } catch {
    return null
  }
  if (probe.sql !== read.sql || probe.params.length !== read.params.length || probe.nextSkip !== read.nextSkip) return null
  if (!probe.context.startsWith(made.root)) return null
  const contextSuffix = probe.context.slice(made.root.length)
  if (read.context !== inputs.root + contextSuffix) return null
  const given = [...inputs.keys, inputs.root]
  const probes = [...made.keys, made.root]
  const slots: Slot[] = []
  for (let index = 0; index < read.params.length; index++) {
    const ours = read.params[index]
    const theirs = probe.params[index]
    if (sameParam(ours, theirs)) continue
    const input = typeof theirs === 'string' ? probes.findIndex((value) => theirs.startsWith(value)) : -1
    if (input < 0) return null
    const suffix = (theirs as string).slice(probes[input].length)
    if (ours !== given[input] + suffix || slots.some((slot) => slot.input === input)) return null
    slots.push({ index, input, suffix })
  }
  return { read, slots, contextSuffix }
}

function fill(plan: Plan, inputs: ReadInputs): PlannedRead {
  const params = [...plan.read.params]
  for (const { index, input, suffix } of plan.slots) params[index] = (input < inputs.keys.length ? inputs.keys[input] : inputs.root) + suffix
  return { ...plan.read, params, context: inputs.root + plan.contextSuffix }
}

function sameParam(a: unknown, b: unknown): boolean {
  if (a === b) return true
  return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((value, i) => value === b[i])
}
