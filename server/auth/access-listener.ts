// Hears that something access is computed from has changed in a tenant database, so every
// server instance sharing the database drops its cached access.
//
// One notification connection per instance and database server, not one per tenant: NOTIFY
// is confined to one database, so the channel lives in each server's `postgres` database
// (notificationUrl) and names the tenant database in its payload. Whoever changes access
// announces it there after committing: the server's write paths (access-service.ts `changed`)
// and the CLI (`announceAccessChange`). A change made by other means (SQL by hand) is seen
// when the cached entry expires (ApiOptions:RoleCacheExpirationMinutes).
//
// The connection is opened on the first authenticated request of a tenant on that server (on
// the deployment's own server at the start: followConfig) and kept for the instance's life;
// it counts within Database:MaxConnections (the registry leaves room for it). Until it
// listens, and whenever it is lost, nothing of the server's tenants may be cached: the caller
// is told so, and on a loss everything cached for them is dropped (a change may have been
// missed).
//
// A writer that must know every instance has heard its change ("refused on the next request,
// wherever it lands") runs a barrier: it NOTIFYs the change and a marker in one statement and
// waits until every listening connection of the server (pg_stat_activity, by application
// name) answers the marker. Notifications arrive in commit order, so an instance that answers
// has handled the change.
//
// The same connection carries the config file's changes (config/config-watch.ts "announced"):
// the CLI NOTIFYs `config:<digest of the file it wrote>` with a marker on the deployment's
// database server, where every instance listens from its start (`followConfig`), and each
// instance answers the marker only once it has reloaded that file and applied it to its
// tenants. So `tenant rotate-key` re-encrypts only after every instance reads both keys, and
// the other tenant commands (add, remove, disable, enable, restore, move) return once every
// instance follows them.

import { randomUUID } from 'node:crypto'
import pg from 'pg'
import type { Logger } from 'pino'
import { databaseUrl } from '../tenancy/database-server.ts'

export const ACCESS_CHANNEL = 'entityctl_access'
const LISTENER_NAME = 'entityctl-access-listener'
const CHANGE = 'change:'
const CONFIG = 'config:'
/** A barrier's marker, `barrier:<id>`, and every listening instance's answer to it, `seen:<id>`. */
export const MARKER = 'barrier:'
export const ANSWER = 'seen:'
/** An instance that does not answer in this time is not waited for (it may be gone). */
const BARRIER_TIMEOUT_MS = 1_000
const RETRY_AFTER_MS = 5_000

/** `table` is the changed table, or '*' when changes may have been missed or are not named. */
export type ChangeHandler = (tenant: string, table: string) => void
/** Applies the config file if it holds the announced content (its digest); resolves once applied. */
export type ConfigHandler = (digest: string) => Promise<void>

/** The database of the tenant's server that carries its notifications. */
export function notificationUrl(tenantUrl: string): string {
  return databaseUrl(tenantUrl, 'postgres')
}

function databaseOf(url: string): string {
  return decodeURIComponent(new URL(url).pathname.slice(1))
}

/** `change:<table>:<database>`: the table never holds a colon, the database may. */
function changePayload(database: string, table: string): string {
  return `${CHANGE}${table}:${database}`
}

interface Listener {
  readonly client: pg.Client
  /** Queries on `client`, one at a time (serially, below). */
  readonly query: Query
  /** Resolves true once LISTEN is in effect, false if it could not be set up. */
  readonly ready: Promise<boolean>
  up: boolean
}

export class AccessListener {
  /** By notification URL: one per database server. */
  readonly #listeners = new Map<string, Listener>()
  /** Servers whose listener failed to connect, with the time to try again. */
  readonly #retryAt = new Map<string, number>()
  /** Per notification URL, the tenants of each database this instance has cached for. */
  readonly #tenants = new Map<string, Map<string, Set<string>>>()
  readonly #barriers = new Map<string, (answer: string) => void>()
  readonly #onChange: ChangeHandler
  #onConfig?: ConfigHandler
  /** The deployment's server (followConfig): its connection is reopened when lost, requests or not. */
  #followed?: string
  /** The config changes heard and not yet applied: a marker is answered after them. */
  #applying: Promise<void> = Promise.resolve()
  readonly #logger: Logger
  #closed = false

  constructor(onChange: ChangeHandler, logger: Logger) {
    this.#onChange = onChange
    this.#logger = logger
  }

  /** Whether changes of this tenant reach this instance, so that caching is safe. */
  listening(tenant: string, url: string): boolean | Promise<boolean> {
    const channel = notificationUrl(url)
    this.#register(channel, databaseOf(url), tenant)
    const listener = this.#listeners.get(channel)
    if (listener) return listener.up || listener.ready
    if (this.#closed || (this.#retryAt.get(channel) ?? 0) > Date.now()) return false
    return this.#open(channel).ready
  }

  /**
   * Listens on the deployment's database server from now on, not from the first request, and
   * applies the config changes announced there (announceConfigChange) before answering.
   */
  followConfig(serverUrl: string, onConfig: ConfigHandler): void {
    this.#onConfig = onConfig
    this.#followed = notificationUrl(serverUrl)
    this.#follow()
  }

  #follow(): void {
    const channel = this.#followed
    if (channel && !this.#closed && !this.#listeners.has(channel)) void this.#open(channel).ready
  }

  /** Announces a change of the tenant's access and waits until every listening instance has heard it. */
  async barrier(tenant: string, url: string, table = '*'): Promise<void> {
    if (!(await this.listening(tenant, url))) return announceAccessChange(url, table)
    const listener = this.#listeners.get(notificationUrl(url))
    if (!listener) return announceAccessChange(url, table)
    await runBarrier(listener.query, this.#barriers, changePayload(databaseOf(url), table))
  }

  /** Forgets the tenant (its pool closed); the server's connection stays for the others. */
  stop(tenant: string): void {
    for (const databases of this.#tenants.values()) {
      for (const [database, tenants] of databases) {
        tenants.delete(tenant)
        if (tenants.size === 0) databases.delete(database)
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    const all = [...this.#listeners.values()]
    this.#listeners.clear()
    await Promise.allSettled(all.map((listener) => listener.client.end()))
  }

  #register(channel: string, database: string, tenant: string): void {
    let databases = this.#tenants.get(channel)
    if (!databases) this.#tenants.set(channel, (databases = new Map()))
    let tenants = databases.get(database)
    if (!tenants) databases.set(database, (tenants = new Set()))
    tenants.add(tenant)
  }

  #open(channel: string): Listener {
    const client = new pg.Client({ connectionString: channel, application_name: LISTENER_NAME })
    const listener: Listener = {
      client,
      query: serially(client),
      up: false,
      ready: client
        .connect()
        .then(() => client.query(`listen ${ACCESS_CHANNEL}`))
        .then(
          () => {
            if (this.#listeners.get(channel) !== listener) return false
            listener.up = true
            return true
          },
          (error: Error) => {
            // Closed while connecting: nothing went wrong.
            if (this.#listeners.get(channel) !== listener) return false
            this.#logger.warn({ err: error.message }, 'access listener could not connect; access is not cached')
            this.#retryAt.set(channel, Date.now() + RETRY_AFTER_MS)
            this.#drop(channel, listener)
            return false
          },
        ),
    }
    client.on('notification', (message) => {
      if (message.channel !== ACCESS_CHANNEL) return
      const payload = message.payload ?? ''
      if (payload.startsWith(MARKER)) {
        // Everything committed before the marker has been handled above (config changes once applied): say so.
        const answer = ANSWER + payload.slice(MARKER.length)
        void this.#applying.then(() => listener.query('select pg_notify($1, $2)', [ACCESS_CHANNEL, answer])).catch(() => {})
      } else if (payload.startsWith(CONFIG)) {
        const onConfig = this.#onConfig
        if (onConfig) this.#applying = this.#applying.then(() => onConfig(payload.slice(CONFIG.length))).catch(() => {})
      } else if (payload.startsWith(ANSWER)) {
        this.#barriers.get(payload.slice(ANSWER.length))?.(payload)
      } else if (payload.startsWith(CHANGE)) {
        const rest = payload.slice(CHANGE.length)
        const colon = rest.indexOf(':')
        this.#changed(channel, rest.slice(colon + 1), rest.slice(0, colon))
      }
    })
    client.on('error', (error) => {
      this.#logger.warn({ err: error.message }, 'access listener lost; cached access dropped')
      this.#drop(channel, listener)
    })
    client.on('end', () => this.#drop(channel, listener))
    this.#listeners.set(channel, listener)
    return listener
  }

  #changed(channel: string, database: string, table: string): void {
    for (const tenant of this.#tenants.get(channel)?.get(database) ?? []) this.#onChange(tenant, table)
  }

  /** Forgets a listener and closes its connection; what was cached while it listened can no longer be trusted. */
  #drop(channel: string, listener: Listener): Promise<void> {
    if (this.#listeners.get(channel) !== listener) return Promise.resolve()
    this.#listeners.delete(channel)
    listener.up = false
    if (channel === this.#followed) setTimeout(() => this.#follow(), RETRY_AFTER_MS).unref()
    for (const tenants of this.#tenants.get(channel)?.values() ?? []) for (const tenant of tenants) this.#onChange(tenant, '*')
    return listener.client.end().catch(() => {})
  }
}

/**
 * For writers outside a server (the CLI) and a listener not yet up: announces that the
 * tenant database's access changed and waits until every server instance listening on its
 * server has heard it, so that the next request anywhere sees it. Returns as soon as the
 * change is announced when no instance listens.
 */
export async function announceAccessChange(url: string, table = '*'): Promise<void> {
  await announce(url, changePayload(databaseOf(url), table))
}

/**
 * For the CLI after writing the config file: announces its content (config-watch.ts
 * configDigest) on the deployment's database server and waits until every server instance
 * listening there has applied it.
 */
export async function announceConfigChange(serverUrl: string, digest: string): Promise<void> {
  await announce(serverUrl, CONFIG + digest)
}

async function announce(url: string, change: string): Promise<void> {
  const client = new pg.Client({ connectionString: notificationUrl(url), application_name: 'entityctl' })
  // A lost connection fails the barrier's statement; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    const barriers = new Map<string, (answer: string) => void>()
    client.on('notification', (message) => {
      if (message.channel === ACCESS_CHANNEL && message.payload?.startsWith(ANSWER)) barriers.get(message.payload.slice(ANSWER.length))?.(message.payload)
    })
    await client.query(`listen ${ACCESS_CHANNEL}`)
    await runBarrier((text, values) => client.query(text, values), barriers, change)
  } finally {
    await client.end().catch(() => {})
  }
}

type Query = (text: string, values?: unknown[]) => Promise<pg.QueryResult>

/**
 * Queries on one connection one at a time: a listener's barriers and its answers to others'
 * markers overlap, and pg queues a query sent while another runs only with a deprecation
 * warning (pg 9 refuses it).
 */
function serially(client: pg.Client): Query {
  let last: Promise<unknown> = Promise.resolve()
  return (text, values) => {
    const next = last.then(() => client.query(text, values))
    last = next.catch(() => {})
    return next
  }
}

/** NOTIFYs the change and a marker, and waits for one answer per listening connection counted at that moment. */
async function runBarrier(query: Query, barriers: Map<string, (answer: string) => void>, change: string): Promise<void> {
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
    const counted = query(
      `select pg_notify($1, $2), pg_notify($1, $3), (select count(*)::int from pg_stat_activity
                                   where datname = current_database() and application_name = $4) as listeners`,
      [ACCESS_CHANNEL, change, MARKER + id, LISTENER_NAME],
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
