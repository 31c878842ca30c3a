// Throttling of failed sign-ins per tenant and user name (decisions.md "Authentication"):
// SignIn:MaxFailures failures within the window lock the name for SignIn:LockoutSeconds;
// meanwhile every attempt answers 429 with Retry-After, without checking the password.
//
// The state lives in the tenant's "_SignInThrottle", so every instance sees the same lock.
// A tenant that does not exist has no database: its names are throttled in memory, so
// an unknown tenant and a known one behave the same to a caller.

import type pg from 'pg'
import type { Config } from '../config/load-config.ts'

interface MemoryState {
  failures: number
  windowStart: number
  lockedUntil: number
}

const MEMORY_LIMIT = 10_000

/** Failures count within this window: 15 minutes, or one lockout if that is longer. */
export function throttleWindowSeconds(settings: Config['SignIn']): number {
  return Math.max(15 * 60, settings.LockoutSeconds)
}

export class SignInThrottle {
  readonly #maxFailures: number
  readonly #lockoutSeconds: number
  readonly #windowSeconds: number
  readonly #memory = new Map<string, MemoryState>()

  constructor(settings: Config['SignIn']) {
    this.#maxFailures = settings.MaxFailures
    this.#lockoutSeconds = settings.LockoutSeconds
    this.#windowSeconds = throttleWindowSeconds(settings)
  }

  /** Seconds the name must still wait, 0 when it may try. */
  async retryAfter(pool: pg.Pool | undefined, tenant: string, username: string): Promise<number> {
    if (!pool) {
      const state = this.#memory.get(memoryKey(tenant, username))
      return state && state.lockedUntil > Date.now() ? Math.ceil((state.lockedUntil - Date.now()) / 1000) : 0
    }
    const { rows } = await pool.query<{ wait: number }>(
      `select ceil(extract(epoch from "LockedUntil" - now()))::int as wait
         from "_SignInThrottle" where "Username" = $1 and "LockedUntil" > now()`,
      [username],
    )
    return rows.length > 0 ? Math.max(1, rows[0].wait) : 0
  }

  async failed(pool: pg.Pool | undefined, tenant: string, username: string): Promise<void> {
    if (!pool) return this.#failedInMemory(memoryKey(tenant, username))
    // Counts the failure (a new window when the last one is over) and, at the limit, locks
    // the name and starts counting afresh: one statement, so concurrent failures all count.
    // In SET, t.* are the values before the update.
    const failures = `(case when t."WindowStart" < now() - make_interval(secs => $2) then 1 else t."Failures" + 1 end)`
    await pool.query(
      `insert into "_SignInThrottle" as t ("Username", "Failures", "WindowStart", "LockedUntil")
       values ($1, case when $3 <= 1 then 0 else 1 end, now(), case when $3 <= 1 then now() + make_interval(secs => $4) end)
       on conflict ("Username") do update set
         "Failures" = case when ${failures} >= $3 then 0 else ${failures} end,
         "WindowStart" = case when ${failures} >= $3 or ${failures} = 1 then now() else t."WindowStart" end,
         "LockedUntil" = case when ${failures} >= $3 then now() + make_interval(secs => $4) else t."LockedUntil" end`,
      [username, this.#windowSeconds, this.#maxFailures, this.#lockoutSeconds],
    )
  }

  async succeeded(pool: pg.Pool, username: string): Promise<void> {
    await pool.query(`delete from "_SignInThrottle" where "Username" = $1`, [username])
  }

  #failedInMemory(key: string): void {
    const now = Date.now()
    let state = this.#memory.get(key)
    if (!state || state.windowStart < now - this.#windowSeconds * 1000) {
      if (this.#memory.size >= MEMORY_LIMIT) this.#forgetExpired(now)
      state = { failures: 0, windowStart: now, lockedUntil: 0 }
      this.#memory.set(key, state)
    }
    state.failures++
    if (state.failures >= this.#maxFailures) {
      state.lockedUntil = now + this.#lockoutSeconds * 1000
      state.failures = 0
      state.windowStart = now
    }
  }

  #forgetExpired(now: number): void {
    for (const [key, state] of this.#memory) {
      if (state.lockedUntil < now && state.windowStart < now - this.#windowSeconds * 1000) this.#memory.delete(key)
    }
    // Still full (a flood of names): drop the oldest rather than grow.
    for (const key of this.#memory.keys()) {
      if (this.#memory.size < MEMORY_LIMIT) break
      this.#memory.delete(key)
    }
  }
}

function memoryKey(tenant: string, username: string): string {
  return `${tenant}\u0000${username}`
}
