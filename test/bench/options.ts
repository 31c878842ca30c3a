// Command-line options of `npm run bench`. Defaults follow WORKLOAD.md §5 (16 connections, 2 s
// warm-up, 10 s measured); --smoke shrinks only the durations, never the dataset, because the
// expected results are those of the full dataset.
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

export type Options = {
  smoke: boolean
  only: string[] | undefined
  connections: number
  warmupSeconds: number
  durationSeconds: number
  floorOnly: boolean
  entityctlUrl: string | undefined
  entityctlDatabase: string | undefined
  tenant: string
  username: string
  password: string
  serverUrl: string
  workloadDir: string
  /** Connections to PostgreSQL per system: the floor's pool and entityctl's PoolSizePerTenant. */
  poolSize: number
  keepDatabases: boolean
  /** Requests per operation whose SQL statements are counted (after one warm request). */
  countedRequests: number
  /** How long to wait for a quiet cluster before measuring anyway. */
  quietTimeoutMs: number
}

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const REPO_ROOT = resolve(BENCH_DIR, '..', '..')
export const WORK_DIR = join(BENCH_DIR, '.work')

const USAGE = `npm run bench -- [options]
  --smoke                  tiny durations: proves the whole chain works (~1-2 minutes)
  --only Q1,Q3,W1          run these operations only
  --duration <s>           measured seconds per operation and system (default 10; smoke 1)
  --warmup <s>             discarded warm-up seconds (default 2; smoke 0.5)
  --connections <n>        autocannon connections (default 16)
  --floor-only             measure only the floor
  --entityctl-url <url>    use an entityctl already running there (tenant, user and data are yours)
  --entityctl-database <d> that server's tenant database: cleaned, vacuumed, statements counted
  --tenant --username --password   its credentials (default bench / bench / bench-password)
  --database-url <url>     PostgreSQL server (default $TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
  --workload-dir <dir>     WORKLOAD.md, workload.json, gen-dataset.mjs (default $BENCH_WORKLOAD_DIR or ../shared/bench)
  --pool-size <n>          PostgreSQL connections per system: floor pool, entityctl PoolSizePerTenant (default 8)
  --keep-databases         do not drop the bench_ databases at the end`

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '16' },
      'floor-only': { type: 'boolean', default: false },
      'entityctl-url': { type: 'string' },
      'entityctl-database': { type: 'string' },
      tenant: { type: 'string', default: 'bench' },
      username: { type: 'string', default: 'bench' },
      password: { type: 'string', default: 'bench-password' },
      'database-url': { type: 'string' },
      'workload-dir': { type: 'string' },
      'pool-size': { type: 'string', default: '8' },
      'keep-databases': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const smoke = values.smoke
  return {
    smoke,
    only: values.only?.split(',').map((id) => id.trim().toUpperCase()).filter(Boolean),
    connections: positive(values.connections, 'connections'),
    warmupSeconds: values.warmup !== undefined ? nonNegative(values.warmup, 'warmup') : smoke ? 0.5 : 2,
    durationSeconds: values.duration !== undefined ? positive(values.duration, 'duration') : smoke ? 1 : 10,
    floorOnly: values['floor-only'],
    entityctlUrl: values['entityctl-url'],
    entityctlDatabase: values['entityctl-database'],
    tenant: values.tenant,
    username: values.username,
    password: values.password,
    serverUrl: values['database-url'] ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    workloadDir: resolve(values['workload-dir'] ?? process.env.BENCH_WORKLOAD_DIR ?? join(REPO_ROOT, '..', 'shared', 'bench')),
    poolSize: positive(values['pool-size'], 'pool-size'),
    keepDatabases: values['keep-databases'],
    countedRequests: smoke ? 3 : 10,
    quietTimeoutMs: smoke ? 3_000 : 30_000,
  }
}

function positive(text: string, name: string): number {
  const value = Number(text)
  if (!(value > 0)) throw new Error(`--${name} must be a positive number, not "${text}"`)
  return value
}

function nonNegative(text: string, name: string): number {
  const value = Number(text)
  if (!(value >= 0)) throw new Error(`--${name} must be zero or more, not "${text}"`)
  return value
}
