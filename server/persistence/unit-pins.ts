// What a unit of work would otherwise take from the world: the instant its rules run at
// (`now`, `today`) and the Guids it generates for new entities. Both are normally fresh; a
// workflow pins them on the EntityManager its session hands out, so a request it replays
// later (workflows/workflow-replay.ts) writes exactly what it wrote the first time.
//
//   pinUnit(em, { now: firstRunAt, newGuid: () => recorded.shift()! })
//   unitNow(em)   // in the rules subscriber and in method contexts
//   unitGuid(em)  // where the body reader creates an entity without a Guid

import { newGuid } from './guid.ts'

export interface UnitPins {
  readonly now: Date
  newGuid(): string
}

const pinned = new WeakMap<object, UnitPins>()

/** Pins the clock and the Guid source of every flush and create on `em`. */
export function pinUnit(em: object, pins: UnitPins): void {
  pinned.set(em, pins)
}

/** The instant the rules of a unit of work on `em` run at. */
export function unitNow(em: object): Date {
  return pinned.get(em)?.now ?? new Date()
}

/** The key of an entity created on `em` without one. */
export function unitGuid(em: object): string {
  return pinned.get(em)?.newGuid() ?? newGuid()
}
