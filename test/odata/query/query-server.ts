// One entityctl server per test file on the test plugins (fixtures/plugins), its tenant
// database seeded with the fixed dataset, and helpers to read through the HTTP API.
//
// The tenant database runs in a time zone that is not UTC (Asia/Kolkata, +05:30): the
// service promises DateTimeOffset values and date functions in UTC whatever the session's
// zone, and a UTC test database would hide every place that forgets it.

import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { databaseUrl } from '../../../server/tenancy/database-server.ts'
import { buildDataset, seedDataset, type Dataset } from '../../fixtures/dataset.ts'
import { call, startTestServer, testDatabaseUrl, type TestServer } from '../../support/test-server.ts'

export const FIXTURE_PLUGINS = fileURLToPath(new URL('../../fixtures/plugins', import.meta.url))

const ZONE = 'Asia/Kolkata'

export interface QueryServer {
  readonly server: TestServer
  readonly data: Dataset
  readonly token: string
  /** The tenant database, for statement counts and direct checks. */
  readonly databaseUrl: string
  /** GET /api/<path>; `path` is sent as written (encode it with url()). */
  get(path: string, headers?: Record<string, string>): ReturnType<typeof call>
  stop(): Promise<void>
}

export interface QueryServerOptions {
  readonly apiOptions?: Record<string, unknown>
}

export async function startQueryServer(options: QueryServerOptions = {}): Promise<QueryServer> {
  // These tests are about what reads answer, on a few rows: expands without $top three levels
  // deep, which ApiOptions:MaxResultItems refuses by default (each counts as MaxTop), are allowed here.
  const server = await startTestServer({
    pluginsDir: FIXTURE_PLUGINS,
    config: { ApiOptions: { MaxResultItems: 1e15, ...options.apiOptions } },
    databaseSettings: { timezone: ZONE },
  })
  const database = server.server.config.Tenants.get(server.tenants[0])!.Database
  const url = databaseUrl(testDatabaseUrl(), database)
  const data = buildDataset()
  let token: string
  try {
    await expectZone(url)
    await seedDataset(url, data)
    token = await server.token()
  } catch (error) {
    // The file's afterAll never sees a server that failed to start: stop it here, database and all.
    await server.stop()
    throw error
  }
  return {
    server,
    data,
    token,
    databaseUrl: url,
    get: (path, headers) => call(`${server.api}/${path}`, { token, headers }),
    stop: () => server.stop(),
  }
}

/** The premise of these tests: a session of the tenant database, as the server opens them, runs in ZONE. */
async function expectZone(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ TimeZone: string }>('show timezone')
    if (rows[0].TimeZone !== ZONE) throw new Error(`the tenant database's sessions run in ${rows[0].TimeZone}, not ${ZONE}`)
  } finally {
    await client.end()
  }
}

/**
 * Builds `Set?$filter=…&…` from readable option text: each value is percent-encoded as a
 * client library would (spaces as %20, `'` kept), so cases read as the OData they test.
 */
export function url(set: string, options: Record<string, string | number | boolean> = {}): string {
  const query = Object.entries(options)
    .map(([name, value]) => `${name}=${encodeValue(String(value))}`)
    .join('&')
  return query ? `${set}?${query}` : set
}

export function encodeValue(value: string): string {
  return encodeURIComponent(value).replaceAll('%27', "'").replaceAll('%2F', '/').replaceAll('%24', '$').replaceAll('%2C', ',')
}
