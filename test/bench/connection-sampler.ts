// PostgreSQL connections of a set of databases, sampled from pg_stat_activity at a fixed
// interval on a connection of the runner's own (to the server's maintenance database, so it
// counts in none of them): in all, and those of entityctl's access listeners (by application
// name, access-listener.ts). Also the cluster's total, against max_connections, and how many
// connections the databases were opened (sessionsOf).
import pg from 'pg'
import { withClient } from './databases.ts'

export type ConnectionSample = { atSeconds: number; total: number; listeners: number; cluster: number }

export type ConnectionSampler = { latest(): ConnectionSample | undefined; stop(): Promise<ConnectionSample[]> }

const LISTENER_NAME = 'entityctl-access-listener'

export async function sampleConnections(serverUrl: string, databases: string[], intervalMs: number): Promise<ConnectionSampler> {
  const client = new pg.Client({ connectionString: serverUrl, application_name: 'bench-connection-sampler' })
  await client.connect()
  const started = Date.now()
  const samples: ConnectionSample[] = []
  let running: Promise<void> = Promise.resolve()
  const take = async () => {
    const { rows } = await client.query<{ total: number; listeners: number; cluster: number }>(
      `SELECT count(*) FILTER (WHERE datname = ANY($1))::int AS total,
              count(*) FILTER (WHERE datname = ANY($1) AND application_name = $2)::int AS listeners,
              count(*) FILTER (WHERE backend_type = 'client backend')::int AS cluster
         FROM pg_stat_activity`,
      [databases, LISTENER_NAME],
    )
    samples.push({ atSeconds: Math.round((Date.now() - started) / 100) / 10, ...rows[0] })
  }
  await take()
  const timer = setInterval(() => {
    running = running.then(take, take)
  }, intervalMs)
  return {
    latest: () => samples[samples.length - 1],
    async stop() {
      clearInterval(timer)
      await running.catch(() => {})
      await client.end()
      return samples
    },
  }
}

/** PostgreSQL's max_connections, for the report. */
export function maxConnectionsOf(serverUrl: string): Promise<number> {
  return withClient(serverUrl, async (client) =>
    Number((await client.query<{ max_connections: string }>('SHOW max_connections')).rows[0].max_connections))
}

/**
 * Connections ever opened to the databases (pg_stat_database.sessions): the difference over a
 * run counts the connections made in it, however short-lived. A backend reports its start
 * when its first transaction ends, so the last connections still starting are missed.
 */
export function sessionsOf(serverUrl: string, databases: string[]): Promise<number> {
  return withClient(serverUrl, async (client) =>
    Number((await client.query<{ sessions: string }>(
      'SELECT coalesce(sum(sessions), 0)::text AS sessions FROM pg_stat_database WHERE datname = ANY($1)', [databases],
    )).rows[0].sessions))
}
