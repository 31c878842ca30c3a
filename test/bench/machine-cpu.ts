// The whole machine's CPU time so far, over all its cores (os.cpus(), in ms): what the runner
// compares before and after a stretch of time, to see how idle or busy the machine was.
import { cpus } from 'node:os'

export interface MachineCpu {
  readonly idleMs: number
  readonly allMs: number
}

export function machineCpu(): MachineCpu {
  let idleMs = 0
  let allMs = 0
  for (const { times } of cpus()) {
    idleMs += times.idle
    allMs += times.user + times.nice + times.sys + times.idle + times.irq
  }
  return { idleMs, allMs }
}

/** CPU time spent busy (not idle) between two readings, in ms. */
export function busyMsBetween(before: MachineCpu, after: MachineCpu): number {
  return after.allMs - before.allMs - (after.idleMs - before.idleMs)
}
