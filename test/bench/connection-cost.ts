// What a new connection to a tenant costs on this machine: the price of each turn of the tenants
// run whose tenant had no connection open (README, "Many busy tenants"). Makes --databases small
// databases (one table, one row), then opens --connections connections round them, one at a
// time, each either only connecting and ending or also running one prepared key read (the
// first statement of a new backend, which fills its catalog caches and plans). PostgreSQL's
// CPU is read from /proc (postgres-cpu.ts), this process's from process.cpuUsage().
// The databases are dropped at the end.
//
//   node test/bench/connection-cost.ts [--connections 300] [--databases 20] [--database-url postgres://…]
import { parseArgs } from 'node:util'
import pg from 'pg'
import { databaseUrl, dropDatabase, recreateDatabase, withClient } from './databases.ts'
import { childrenOf, commandOf, postgresCpuMs, postmasterOf } from './postgres-cpu.ts'

const { values: args } = parseArgs({
  options: {
    connections: { type: 'string', default: '300' },
    databases: { type: 'string', default: '20' },
    'database-url': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
})
if (args.help) {
  process.stdout.write('node test/bench/connection-cost.ts [--connections 300] [--databases 20] [--database-url postgres://…]\n')
  process.exit(0)
}
const serverUrl = args['database-url'] ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const connections = wholeNumber('connections')
const databases = Array.from({ length: wholeNumber('databases') }, (_, i) => `bench_connection_cost_${i}`)
// As a tenant pool connects (tenancy/tenant-database.ts).
const STARTUP = '-c plan_cache_mode=force_generic_plan'
const KEY = '00000000-0000-4000-8000-000000000001'
const KEY_READ = { name: 'key-read', text: 'select "Name", "_Version" from "Customer" where "Guid" = $1::uuid', values: [KEY] }

try {
  for (const database of databases) {
    await recreateDatabase(serverUrl, database)
    await withClient(databaseUrl(serverUrl, database), async (client) => {
      await client.query('create table "Customer" ("Guid" uuid primary key, "Name" text, "_Version" int)')
      await client.query('insert into "Customer" values ($1, $2, 1)', [KEY, 'Petra Hoffmann'])
    })
  }
  const postmaster = await withClient(serverUrl, (client) => postmasterOf(client, 'connection-cost'))
  for (const [name, work] of [['connect and end', undefined], ['connect, one key read, end', KEY_READ]] as const) {
    const postgres0 = postgresCpuMs(postmaster)
    const own0 = process.cpuUsage()
    const started = performance.now()
    for (let i = 0; i < connections; i++) {
      const client = new pg.Client({ connectionString: databaseUrl(serverUrl, databases[i % databases.length]), options: STARTUP })
      await client.connect()
      if (work) await client.query(work)
      await client.end()
    }
    const elapsed = performance.now() - started
    const own = process.cpuUsage(own0)
    // The last backends end after client.end() returns: wait until the postmaster has reaped them.
    await reaped(postmaster)
    const per = (ms: number) => (ms / connections).toFixed(2)
    process.stdout.write(
      `${name}: PostgreSQL ${per(postgresCpuMs(postmaster) - postgres0)} ms of CPU a connection, ` +
        `this client ${per((own.user + own.system) / 1000)} ms, ${per(elapsed)} ms elapsed\n`,
    )
  }
} finally {
  for (const database of databases) await dropDatabase(serverUrl, database)
}

function wholeNumber(name: 'connections' | 'databases'): number {
  const value = Number(args[name])
  if (Number.isInteger(value) && value >= 1) return value
  process.stderr.write(`connection-cost: --${name} must be a whole number of at least 1, not '${args[name]}'\n`)
  process.exit(2)
}

/** Until no client backend of the bench databases is left (their CPU is then the postmaster's cutime). */
async function reaped(postmaster: number): Promise<void> {
  const backends = () => childrenOf(postmaster).filter((pid) => commandOf(pid).includes('bench_connection_cost_'))
  for (let waited = 0; backends().length > 0 && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
}
