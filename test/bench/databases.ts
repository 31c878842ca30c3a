// The runner's own dealings with PostgreSQL: creating and dropping the benchmark databases,
// cleaning and vacuuming them before measuring, and waiting for a quiet cluster (WORKLOAD.md §5).
import { readFileSync } from 'node:fs'
import pg from 'pg'

/** The same server, another database: `postgres://u@h:5432/postgres` → `postgres://u@h:5432/bench_floor`. */
export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${encodeURIComponent(database)}`
  return url.toString()
}

export function databaseName(connectionString: string): string {
  return decodeURIComponent(new URL(connectionString).pathname.slice(1))
}

export async function withClient<T>(connectionString: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

export async function recreateDatabase(serverUrl: string, database: string): Promise<void> {
  await dropDatabase(serverUrl, database)
  // template0 with the C locale: string order by code point whatever the cluster's default.
  await withClient(serverUrl, (client) =>
    client.query(`CREATE DATABASE "${database}" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`),
  )
}

export async function dropDatabase(serverUrl: string, database: string): Promise<void> {
  await withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`))
}

export async function applySqlFile(connectionString: string, file: string): Promise<void> {
  await withClient(connectionString, (client) => client.query(readFileSync(file, 'utf8')))
}

/** Removes what an interrupted run may have left (WORKLOAD.md §4), then vacuums and analyzes. */
export async function cleanAndVacuum(connectionString: string, firstWriteNumber: number): Promise<number> {
  return withClient(connectionString, async (client) => {
    const deleted = await client.query('DELETE FROM "Order" WHERE "Number" >= $1', [firstWriteNumber])
    // VACUUM also sets the visibility map, which index-only scans need after a bulk load.
    await client.query('VACUUM (ANALYZE)')
    return deleted.rowCount ?? 0
  })
}

/**
 * Waits until no other session runs a query and no autovacuum works anywhere in the cluster,
 * so a measurement does not share the cores with leftovers of the previous one. The cluster may
 * be shared with other work: after `timeoutMs` it gives up and says so instead of waiting forever.
 */
export async function waitForQuietCluster(serverUrl: string, timeoutMs: number): Promise<boolean> {
  return withClient(serverUrl, async (client) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const { rows } = await client.query<{ busy: number }>(
        `SELECT count(*)::int AS busy FROM pg_stat_activity
          WHERE pid <> pg_backend_pid()
            AND (backend_type = 'autovacuum worker' OR (backend_type = 'client backend' AND state = 'active'))`,
      )
      if (rows[0].busy === 0) return true
      if (Date.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  })
}

export async function serverVersion(serverUrl: string): Promise<string> {
  return withClient(serverUrl, async (client) => (await client.query<{ v: string }>('SELECT version() AS v')).rows[0].v)
}
