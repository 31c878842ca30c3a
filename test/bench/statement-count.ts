// SQL statements per request, and their time in PostgreSQL, for each operation and system
// (WORKLOAD.md §5). Two ways, chosen once per run:
// - pg_stat_statements, when the cluster preloads it: exact per database, no change to the
//   servers under test (their own connections are measured);
// - otherwise a counting proxy (pg-wire-proxy.ts): the servers run the checking phase connected
//   through it and are restarted on a direct connection for the load tests.
import pg from 'pg'
import { databaseUrl, withClient } from './databases.ts'
import { startWireProxy } from './pg-wire-proxy.ts'
import type { WireProxy } from './pg-wire-proxy.ts'

export type StatementSample = {
  /** Mean over the measured requests. */
  statements: number
  sqlMs: number
  /** The statements' texts: of the first request (proxy) or per statement with calls per request (pg_stat_statements). */
  texts?: string[]
}

export type StatementCounter = {
  method: 'pg_stat_statements' | 'wire-proxy'
  description: string
  /** The connection string a server under test must use for its statements to be counted. */
  routeThrough(connectionString: string): string
  /** Whether servers must be restarted on a direct connection before load tests. */
  needsRestart: boolean
  /** Runs `request` `times` times, one after another, and averages what PostgreSQL saw in `database`. */
  measure(database: string, times: number, request: () => Promise<void>): Promise<StatementSample>
  close(): Promise<void>
}

export async function openStatementCounter(serverUrl: string): Promise<StatementCounter> {
  const preloaded = await withClient(serverUrl, async (client) => {
    const { rows } = await client.query<{ libs: string }>('SELECT current_setting($1) AS libs', ['shared_preload_libraries'])
    return rows[0].libs.split(',').some((lib) => lib.trim() === 'pg_stat_statements')
  })
  return preloaded ? pgStatStatementsCounter(serverUrl) : wireProxyCounter(serverUrl)
}

function pgStatStatementsCounter(serverUrl: string): StatementCounter {
  const clients = new Map<string, pg.Client>()
  // A connection to the measured database itself: its own statements are excluded by text.
  const clientFor = async (database: string) => {
    let client = clients.get(database)
    if (!client) {
      client = new pg.Client({ connectionString: databaseUrl(serverUrl, database) })
      await client.connect()
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements')
      clients.set(database, client)
    }
    return client
  }
  return {
    method: 'pg_stat_statements',
    description: 'pg_stat_statements (calls and total_exec_time + total_plan_time in the system\'s database)',
    routeThrough: (connectionString) => connectionString,
    needsRestart: false,
    async measure(database, times, request) {
      const client = await clientFor(database)
      await client.query(
        'SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = $1), 0)', [database])
      for (let i = 0; i < times; i++) await request()
      const { rows } = await client.query<{ query: string; calls: string; ms: number }>(
        `SELECT query, calls, total_exec_time + total_plan_time AS ms
           FROM pg_stat_statements
          WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) AND query NOT LIKE '%pg_stat_statements%'
          ORDER BY calls DESC`,
        [database])
      return {
        statements: rows.reduce((sum, row) => sum + Number(row.calls), 0) / times,
        sqlMs: rows.reduce((sum, row) => sum + row.ms, 0) / times,
        // Normalized texts of all measured requests, most frequent first: no per-request order.
        texts: rows.map((row) => `${Number(row.calls) / times}× ${row.query}`),
      }
    },
    async close() {
      for (const client of clients.values()) await client.end()
    },
  }
}

async function wireProxyCounter(serverUrl: string): Promise<StatementCounter> {
  const upstream = new URL(serverUrl)
  const proxy: WireProxy = await startWireProxy(upstream.hostname, Number(upstream.port || 5432))
  return {
    method: 'wire-proxy',
    description:
      'pg_stat_statements is not in shared_preload_libraries: statements counted by a protocol proxy ' +
      '(Execute and simple-Query messages per database); sqlMs is Sync→ReadyForQuery time seen by the proxy ' +
      '(execution, planning, commit flush and a loopback round trip)',
    routeThrough(connectionString) {
      const url = new URL(connectionString)
      url.hostname = '127.0.0.1'
      url.port = String(proxy.port)
      return url.toString()
    },
    needsRestart: true,
    async measure(database, times, request) {
      const before = proxy.totals(database)
      proxy.recordTexts()
      await request()
      const texts = proxy.takeTexts(database)
      for (let i = 1; i < times; i++) await request()
      // Statements a server sends after its answer (a deferred commit, say) belong to the request.
      await new Promise((resolve) => setTimeout(resolve, 50))
      const after = proxy.totals(database)
      return {
        statements: (after.statements - before.statements) / times,
        sqlMs: (after.busyMs - before.busyMs) / times,
        texts,
      }
    },
    close: () => proxy.close(),
  }
}
