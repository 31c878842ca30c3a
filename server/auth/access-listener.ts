// Hears, per tenant database, that something access is computed from has changed (the
// triggers of persistence/internal-tables.ts NOTIFY 'entityctl_access' with the table name),
// so every server instance sharing the database drops its cached access.
//
// One connection per tenant this instance is caching for, opened on the tenant's first
// authenticated request and closed with the tenant's pool (`stop`, called by the
// TenantRegistry's onClose: access-service.ts), so it counts within Database:MaxConnections as
// one more connection per open tenant. Until it listens, and whenever it is lost, nothing of
// that tenant may be cached: the caller is told so, and on a loss everything cached for the
// tenant is dropped (a change may have been missed).
//
// A writer that must know every instance has heard its change (revoke: "refused on the next
// request, wherever it lands") runs a barrier: it NOTIFYs a marker and waits until every
// listening connection of the database (pg_stat_activity, by application name) answers it.
// Notifications arrive in commit order, so an instance that answers has seen the change.

import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Logger } from 'pino'

export const ACCESS_CHANNEL = 'entityctl_access'
const LISTENER_NAME = 'entityctl-access-listener'
const MARKER = 'barrier:'
const ANSWER = 'seen:'
/** An instance that does not answer in this time is not waited for (it may be gone). */
const BARRIER_TIMEOUT_MS = 1_000
const RETRY_AFTER_MS = 5_000

/** `table` is the changed table, or '*' when changes may have been missed. */
export type ChangeHandler = (tenant: string, table: string) => void

interface Listener {
  readonly client: pg.Client
  /** Resolves true once LISTEN is in effect, false if it could not be set up. */
  readonly ready: Promise<boolean>
  up: boolean
}

export class AccessListener {
  readonly #listeners = new Map<string, Listener>()
  /** Tenants whose listener failed to connect, with the time to try again. */
  readonly #retryAt = new Map<string, number>()
  readonly #barriers = new Map<string, (answer: string) => void>()
  readonly #onChange: ChangeHandler
  readonly #logger: Logger
  #closed = false

  constructor(onChange: ChangeHandler, logger: Logger) {
    this.#onChange = onChange
    this.#logger = logger
  }

  /** Whether changes of this tenant reach this instance, so that caching is safe. */
  listening(tenant: string, url: string): boolean | Promise<boolean> {
    const listener = this.#listeners.get(tenant)
    if (listener) return listener.up || listener.ready
    if (this.#closed || (this.#retryAt.get(tenant) ?? 0) > Date.now()) return false
    return this.#open(tenant, url).ready
  }

  /** Waits until every instance listening on the tenant's database has heard what committed before. */
  async barrier(tenant: string, url: string): Promise<void> {
    if (!(await this.listening(tenant, url))) return announceAccessChange(url)
    const listener = this.#listeners.get(tenant)!
    await runBarrier(listener.client, this.#barriers)
  }

  /** Closes the tenant's listener (its pool is closing); the next use opens one again. */
  async stop(tenant: string): Promise<void> {
    const listener = this.#listeners.get(tenant)
    if (listener) await this.#drop(tenant, listener)
  }

  async close(): Promise<void> {
    this.#closed = true
    const all = [...this.#listeners.values()]
    this.#listeners.clear()
    await Promise.allSettled(all.map((listener) => listener.client.end()))
  }

  #open(tenant: string, url: string): Listener {
    const client = new pg.Client({ connectionString: url, application_name: LISTENER_NAME })
    const listener: Listener = {
      client,
      up: false,
      ready: client
        .connect()
        .then(() => client.query(`listen ${ACCESS_CHANNEL}`))
        .then(
          () => {
            if (this.#listeners.get(tenant) !== listener) return false
            listener.up = true
            return true
          },
          (error: Error) => {
            // Stopped while connecting: nothing went wrong.
            if (this.#listeners.get(tenant) !== listener) return false
            this.#logger.warn({ tenant, err: error.message }, 'access listener could not connect; access of this tenant is not cached')
            this.#retryAt.set(tenant, Date.now() + RETRY_AFTER_MS)
            this.#drop(tenant, listener)
            return false
          },
        ),
    }
    client.on('notification', (message) => {
      if (message.channel !== ACCESS_CHANNEL) return
      const payload = message.payload ?? '*'
      if (payload.startsWith(MARKER)) {
        // Everything committed before the marker has been handled above: say so.
        client.query('select pg_notify($1, $2)', [ACCESS_CHANNEL, ANSWER + payload.slice(MARKER.length)]).catch(() => {})
      } else if (payload.startsWith(ANSWER)) {
        this.#barriers.get(payload.slice(ANSWER.length))?.(payload)
      } else {
        this.#onChange(tenant, payload)
      }
    })
    client.on('error', (error) => {
      this.#logger.warn({ tenant, err: error.message }, 'access listener lost; cached access of this tenant dropped')
      this.#drop(tenant, listener)
    })
    client.on('end', () => this.#drop(tenant, listener))
    this.#listeners.set(tenant, listener)
    return listener
  }

  /** Forgets a listener and closes its connection; what was cached while it listened can no longer be trusted. */
  #drop(tenant: string, listener: Listener): Promise<void> {
    if (this.#listeners.get(tenant) !== listener) return Promise.resolve()
    this.#listeners.delete(tenant)
    listener.up = false
    this.#onChange(tenant, '*')
    return listener.client.end().catch(() => {})
  }
}

/**
 * For writers outside a server (the CLI): waits until every server instance listening on the
 * database has heard the changes this process committed, so that its next request anywhere
 * sees them. Returns at once when no instance listens.
 */
export async function announceAccessChange(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: 'entityctl' })
  // A lost connection fails the barrier's statement; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    const barriers = new Map<string, (answer: string) => void>()
    client.on('notification', (message) => {
      if (message.channel === ACCESS_CHANNEL && message.payload?.startsWith(ANSWER)) barriers.get(message.payload.slice(ANSWER.length))?.(message.payload)
    })
    await client.query(`listen ${ACCESS_CHANNEL}`)
    await runBarrier(client, barriers)
  } finally {
    await client.end().catch(() => {})
  }
}

/** NOTIFYs a marker and waits for one answer per listening connection counted at that moment. */
async function runBarrier(client: pg.Client, barriers: Map<string, (answer: string) => void>): Promise<void> {
  const id = randomUUID()
  let expected = Infinity
  let answers = 0
  let timer: NodeJS.Timeout | undefined
  const done = new Promise<void>((resolve) => {
    barriers.set(id, () => {
      if (++answers >= expected) resolve()
    })
    timer = setTimeout(resolve, BARRIER_TIMEOUT_MS)
    timer.unref()
    const counted = client.query<{ listeners: number }>(
      `select pg_notify($1, $2), (select count(*)::int from pg_stat_activity
                                   where datname = current_database() and application_name = $3) as listeners`,
      [ACCESS_CHANNEL, MARKER + id, LISTENER_NAME],
    )
    counted.then(
      ({ rows }) => {
        expected = rows[0].listeners
        if (answers >= expected) resolve()
      },
      () => resolve(),
    )
  })
  try {
    await done
  } finally {
    clearTimeout(timer)
    barriers.delete(id)
  }
}
