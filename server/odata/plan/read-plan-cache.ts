// Reads of one shape are one statement. Two requests with the same path (entity set,
// navigation), the same query options and the same caller differ only in the keys of the
// path, and the statement takes those as parameters whose places the compiler recorded
// (SqlBuilder.pathKey). A cached read keeps its plan and its statement, so a repeated read
// skips parsing, binding, planning and compiling (about 20 µs of a key lookup's server CPU:
// README, Performance) and only puts its own keys in place. The service root is not part of
// the statement: the handler writes @odata.context and @odata.nextLink from the request.
//
// Reads are kept per caller's access context, because binding checks its permissions; a
// change of roles gives the caller a new context and so starts over.

import type { AccessContext } from '../../auth/access-context.ts'
import type { CompiledRead } from '../sql/compile-read.ts'
import type { ReadPlan } from './read-plan.ts'

/** A read ready to run: its plan, its statement, and what follows the service root in its @odata.context. */
export interface PreparedRead {
  /** As planned for the first read of the shape: its path keys are that read's; the statement's parameters hold this one's. */
  readonly plan: ReadPlan
  readonly statement: CompiledRead
  readonly contextPath: string
}

/** Shapes remembered per caller; a caller with more starts over (a client generating queries). */
const READS_PER_CALLER = 256

export class ReadPlanCache {
  readonly #byCaller = new WeakMap<AccessContext, Map<string, PreparedRead>>()

  /** The read of `shape` for the path's `keys`: the cached one with these keys in place, or `prepare()`'s (then cached). */
  read(access: AccessContext | undefined, shape: string, keys: readonly string[], prepare: () => PreparedRead): PreparedRead {
    if (!access) return prepare()
    let reads = this.#byCaller.get(access)
    if (!reads) this.#byCaller.set(access, (reads = new Map()))
    const cached = reads.get(shape)
    if (cached) return withKeys(cached, keys)
    const prepared = prepare()
    // A statement that does not take every key of the path as a parameter is prepared anew each time.
    if (prepared.statement.keySlots.length === keys.length) {
      if (reads.size >= READS_PER_CALLER) reads.clear()
      reads.set(shape, prepared)
    }
    return prepared
  }
}

function withKeys(read: PreparedRead, keys: readonly string[]): PreparedRead {
  if (keys.length === 0) return read
  const params = [...read.statement.params]
  read.statement.keySlots.forEach((slot, i) => {
    params[slot] = keys[i]
  })
  return { ...read, statement: { ...read.statement, params } }
}
