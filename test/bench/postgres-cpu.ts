// PostgreSQL's CPU so far, read from /proc: the postmaster, every child it has reaped (cutime,
// cstime) and those alive. A backend that ends between two readings is counted all the same:
// its CPU moves into the postmaster's cutime once it is reaped. So PostgreSQL must run on this
// machine, and be otherwise quiet: every backend's CPU, and the background writers', counts.
// Used by connection-cost.ts (what a new connection costs) and write-cpu.ts (what a write costs).
import { readdirSync, readFileSync } from 'node:fs'
import type pg from 'pg'

/** /proc's clock ticks (USER_HZ, 100 a second), in ms. */
export const TICK_MS = 10

/** The postmaster of the server `client` is connected to. */
export async function postmasterOf(client: pg.ClientBase | pg.Pool, tool: string): Promise<number> {
  const backend = Number((await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0].pid)
  const fields = statFields(backend)
  if (!fields) throw new Error(`${tool}: no /proc/${backend}: PostgreSQL must run on this machine`)
  return Number(fields[1])
}

/** CPU of the postmaster, of the children it reaped and of those alive, in ms. */
export function postgresCpuMs(postmaster: number): number {
  let ticks = 0
  for (const pid of [postmaster, ...childrenOf(postmaster)]) {
    const fields = statFields(pid)
    // utime, stime, cutime, cstime: fields 14–17, here 11–14.
    if (fields) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
  }
  return ticks * TICK_MS
}

export function childrenOf(postmaster: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statFields(pid)?.[1] === String(postmaster))
}

/** The process's command line; '' once it has ended (a backend may end while it is looked at). */
export function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
}

/** /proc/<pid>/stat after the command name: fields from the state on (man 5 proc); undefined once it has ended. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
