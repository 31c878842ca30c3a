// Throttling of sign-ins (decisions.md "Authentication"): every attempt is counted, before its
// password is checked, against three counters in its tenant, with the rules of
// sign-in-counters.ts:
//   - its user name:        SignIn:MaxFailures failures lock the name for SignIn:LockoutSeconds;
//   - its client address:   SignIn:MaxFailuresPerAddress (one address trying many names);
//   - the whole tenant:     SignIn:MaxFailuresPerTenant (many addresses trying many names).
// An attempt any of them refuses answers 429 with Retry-After, without checking the password,
// and counts on none of them. Whether the user exists plays no part: an unknown name is
// counted and locked like a known one.
//
// A known tenant's counters live in its database ("_SignInLimit"), read and written in one
// transaction that locks the attempt's rows (always in the same order, so two attempts cannot
// deadlock): every instance serving the tenant sees and respects the same counts. So the
// address limit is per tenant. A tenant that does not exist has no database: its counters
// are kept in memory, per instance, so an unknown tenant answers like a known one.

import type pg from 'pg'
import type { Config } from '../config/load-config.ts'
import { inTransaction } from '../persistence/sql.ts'
import { addressCounterKey } from './client-address.ts'
import { type Counter, freshCounter, type Limit, recordFailure, recordSuccess, reserve, waitSeconds } from './sign-in-counters.ts'

export interface SignInAttempt {
  readonly tenant: string
  readonly username: string
  /** The client's address (client-address.ts). */
  readonly address: string
}

export type Scope = 'address' | 'tenant' | 'user'

/** A refused attempt: the limit that refused it (the longest wait, when several did) and the seconds to wait. */
export interface ThrottleRefusal {
  readonly scope: Scope
  readonly waitSeconds: number
}

interface CounterKey {
  readonly scope: Scope
  readonly key: string
}

interface ScopedCounter {
  readonly scope: Scope
  readonly counter: Counter
}

/** Changes counters in place; answers a refusal (then it changed nothing) or undefined. */
type CounterChange = (counters: readonly ScopedCounter[], now: number) => ThrottleRefusal | undefined

const MEMORY_LIMIT = 10_000

/** The longest time a counter means anything: rows idle for longer may be purged. */
export function throttleWindowSeconds(settings: Config['SignIn']): number {
  return Math.max(settings.WindowSeconds, settings.LockoutSeconds, settings.AddressLockoutSeconds, settings.TenantLockoutSeconds)
}

export class SignInThrottle {
  readonly #limits: ReadonlyMap<Scope, Limit>
  readonly #memory = new Map<string, Counter>()

  constructor(settings: Config['SignIn']) {
    // Failures count within the window, or one lockout if that is longer.
    const limit = (maxFailures: number, lockoutSeconds: number): Limit => ({
      maxFailures,
      lockoutMs: lockoutSeconds * 1000,
      windowMs: Math.max(settings.WindowSeconds, lockoutSeconds) * 1000,
    })
    const limits = new Map<Scope, Limit>([['user', limit(settings.MaxFailures, settings.LockoutSeconds)]])
    // 0 turns the address or tenant limit off.
    if (settings.MaxFailuresPerAddress > 0) limits.set('address', limit(settings.MaxFailuresPerAddress, settings.AddressLockoutSeconds))
    if (settings.MaxFailuresPerTenant > 0) limits.set('tenant', limit(settings.MaxFailuresPerTenant, settings.TenantLockoutSeconds))
    this.#limits = limits
  }

  /**
   * Reserves the attempt on each of its counters and answers undefined, or answers which limit
   * refused it and the seconds to wait (reserving nothing). A reserved attempt must be settled,
   * whatever happens.
   */
  reserve(pool: pg.Pool | undefined, attempt: SignInAttempt): Promise<ThrottleRefusal | undefined> {
    return this.#update(pool, attempt, true, (counters, now) => {
      let refusal: ThrottleRefusal | undefined
      for (const { scope, counter } of counters) {
        const wait = waitSeconds(counter, this.#limit(scope), now)
        if (wait > (refusal?.waitSeconds ?? 0)) refusal = { scope, waitSeconds: wait }
      }
      if (!refusal) for (const { scope, counter } of counters) reserve(counter, this.#limit(scope), now)
      return refusal
    })
  }

  /** Records the outcome of a reserved attempt. */
  async settle(pool: pg.Pool | undefined, attempt: SignInAttempt, succeeded: boolean): Promise<void> {
    await this.#update(pool, attempt, false, (counters, now) => {
      for (const { scope, counter } of counters) {
        if (succeeded) recordSuccess(counter, scope === 'user')
        else recordFailure(counter, this.#limit(scope), now)
      }
      return undefined
    })
  }

  #limit(scope: Scope): Limit {
    return this.#limits.get(scope)!
  }

  #keys(attempt: SignInAttempt): CounterKey[] {
    const keys: CounterKey[] = [{ scope: 'user', key: attempt.username }]
    if (this.#limits.has('address')) keys.push({ scope: 'address', key: addressCounterKey(attempt.address) })
    if (this.#limits.has('tenant')) keys.push({ scope: 'tenant', key: '' })
    return keys
  }

  /** Applies `change` to the attempt's counters, atomically; `create`: missing ones start fresh. */
  #update(
    pool: pg.Pool | undefined,
    attempt: SignInAttempt,
    create: boolean,
    change: CounterChange,
  ): Promise<ThrottleRefusal | undefined> {
    const keys = this.#keys(attempt)
    if (!pool) return Promise.resolve(this.#updateInMemory(attempt.tenant, keys, create, change))
    return inTransaction(pool, async (client) => {
      const { rows, now } = await lockCounters(client, keys, create)
      const refusal = change(rows, now)
      if (!refusal) await writeCounters(client, rows)
      return refusal
    })
  }

  // Synchronous from read to write: nothing else runs in between.
  #updateInMemory(
    tenant: string,
    keys: CounterKey[],
    create: boolean,
    change: CounterChange,
  ): ThrottleRefusal | undefined {
    const now = Date.now()
    const counters: ScopedCounter[] = []
    for (const { scope, key } of keys) {
      const memoryKey = `${tenant}\u0000${scope}\u0000${key}`
      let counter = this.#memory.get(memoryKey)
      if (!counter && create) {
        if (this.#memory.size >= MEMORY_LIMIT) this.#forgetOldest(now)
        counter = freshCounter(now)
        this.#memory.set(memoryKey, counter)
      }
      if (counter) counters.push({ scope, counter })
    }
    return change(counters, now)
  }

  #forgetOldest(now: number): void {
    for (const [key, counter] of this.#memory) {
      if (counter.lockedUntil <= now && counter.pending === 0 && counter.failures === 0) this.#memory.delete(key)
    }
    // Still full (a flood of names): drop the oldest rather than grow.
    for (const key of this.#memory.keys()) {
      if (this.#memory.size < MEMORY_LIMIT) break
      this.#memory.delete(key)
    }
  }
}

interface CounterRow extends ScopedCounter {
  readonly key: string
}

async function lockCounters(client: pg.PoolClient, keys: CounterKey[], create: boolean): Promise<{ rows: CounterRow[]; now: number }> {
  const scopes = keys.map((k) => k.scope)
  const names = keys.map((k) => k.key)
  if (create) {
    await client.query(
      `insert into "_SignInLimit" ("Scope", "Key", "Failures", "Pending", "WindowStart")
       select scope, key, 0, 0, now() from unnest($1::text[], $2::text[]) as k(scope, key) order by scope, key
       on conflict do nothing`,
      [scopes, names],
    )
  }
  // Locked in (Scope, Key) order by every attempt, so none waits for a row another holds
  // while holding one that other waits for.
  // Times as epoch milliseconds: numbers, whatever the pool's type parsers make of timestamps.
  const { rows } = await client.query<{ scope: Scope; key: string; failures: number; pending: number; windowStart: number; lockedUntil: number; now: number }>(
    `select "Scope" as scope, "Key" as key, "Failures" as failures, "Pending" as pending,
            extract(epoch from "WindowStart")::float8 * 1000 as "windowStart",
            coalesce(extract(epoch from "LockedUntil")::float8 * 1000, 0) as "lockedUntil",
            extract(epoch from now())::float8 * 1000 as now
       from "_SignInLimit"
      where ("Scope", "Key") in (select * from unnest($1::text[], $2::text[]))
      order by "Scope", "Key"
        for update`,
    [scopes, names],
  )
  return {
    now: rows.length > 0 ? rows[0].now : Date.now(),
    rows: rows.map(({ scope, key, failures, pending, windowStart, lockedUntil }) => ({ scope, key, counter: { failures, pending, windowStart, lockedUntil } })),
  }
}

async function writeCounters(client: pg.PoolClient, rows: CounterRow[]): Promise<void> {
  if (rows.length === 0) return
  await client.query(
    `update "_SignInLimit" t
        set "Failures" = k.failures, "Pending" = k.pending,
            "WindowStart" = to_timestamp(k.window_start / 1000),
            "LockedUntil" = to_timestamp(nullif(k.locked_until, 0) / 1000)
       from unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::float8[], $6::float8[])
            as k(scope, key, failures, pending, window_start, locked_until)
      where t."Scope" = k.scope and t."Key" = k.key`,
    [
      rows.map((r) => r.scope),
      rows.map((r) => r.key),
      rows.map((r) => r.counter.failures),
      rows.map((r) => r.counter.pending),
      rows.map((r) => r.counter.windowStart),
      rows.map((r) => r.counter.lockedUntil),
    ],
  )
}
