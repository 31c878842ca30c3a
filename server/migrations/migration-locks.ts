// Advisory locks that make migrations one job, however many instances and CLI commands start
// at once: a cluster lock on the configured database server (one migration job at a time: the
// others wait, then find their tenants current and skip them), and a lock in each tenant
// database (nothing else migrates that database meanwhile, whichever configuration or server
// reaches it). Session locks, held on a connection of their own and released with it; taken
// cluster first, then tenant, never the other way round, so two jobs cannot wait for each other.

import pg from 'pg'

/** Arbitrary keys, the same in every instance and CLI; nothing else of entityctl takes advisory locks with them. */
const CLUSTER_LOCK = 1_720_393_541
const TENANT_LOCK = 1_131_024_786

/** Runs `work` holding the cluster's migration lock; `waiting` is called if another job holds it. */
export async function withClusterLock<T>(serverUrl: string, work: () => Promise<T>, waiting: () => void): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl })
  // A lost connection fails the statement in flight; unheard, its 'error' event would end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [CLUSTER_LOCK])
    if (!rows[0].locked) {
      waiting()
      await client.query('select pg_advisory_lock($1)', [CLUSTER_LOCK])
    }
    return await work()
  } finally {
    await client.end().catch(() => {})
  }
}

/** Takes the tenant database's migration lock on `client`, held until the client ends. */
export async function lockTenantDatabase(client: pg.Client): Promise<void> {
  await client.query('select pg_advisory_lock($1)', [TENANT_LOCK])
}
