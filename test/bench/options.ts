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
  /** Also measure the stack floor: the floor's handlers served through Koa (floor-server.ts). */
  stackFloor: boolean
  entityctlUrl: string | undefined
  entityctlDatabase: string | undefined
  tenant: string
  /** Whether --tenant was given: the tenants run names its tenants after it (else benchtenant-…). */
  tenantGiven: boolean
  username: string
  password: string
  /** `--plugins-dir`: entityctl's Server:PluginsDir; by default the bench plugin (test/bench/plugin). */
  pluginsDir: string
  serverUrl: string
  workloadDir: string
  /** Connections to PostgreSQL per system: the floor's pool and entityctl's PoolSizePerTenant. */
  poolSize: number
  /** Whether --pool-size was given: the tenants run keeps entityctl's own default otherwise. */
  poolSizeGiven: boolean
  keepDatabases: boolean
  /** Requests per operation whose SQL statements are counted (after one warm request). */
  countedRequests: number
  /** How long to wait for a quiet cluster before measuring anyway. */
  quietTimeoutMs: number
  /** `--soak [s]`: a memory soak of entityctl alone instead of the comparison (soak.ts). */
  soakSeconds: number | undefined
  /** `--tenants <n>`: many tenants on one entityctl, connections counted (tenants-run.ts). */
  tenants: number | undefined
  /** entityctl's Database:MaxConnections; undefined: its default. */
  maxConnections: number | undefined
  /** `--heavy`: key-read latency on two tenants while heavy queries run on one (heavy-run.ts). */
  heavy: boolean
  /** Orders per tenant of the heavy run. */
  heavyOrders: number
  /** `--scale n`: the dataset n times the workload's (scaled-dataset.mjs); 1 is gen-dataset.mjs's own. */
  scale: number
  /** `--workflow`: the cost of request n of one 200-request workflow (workflow-run.ts). */
  workflow: boolean
  /** Workflows of the workflow run, whose per-request times are taken the median of. */
  workflowRuns: number
  /** Orders whose lines W2 patches: 64 spreads the writers over as many orders; few puts several on each order at once. */
  w2Orders: number
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
  --stack-floor            also measure the floor's handlers served through Koa, @koa/router and
                           koa-body (entityctl's HTTP stack, none of its middleware): what the
                           framework alone costs against the floor
  --entityctl-url <url>    use an entityctl already running there (tenant, user and data are yours)
  --entityctl-database <d> that server's tenant database: cleaned, vacuumed, statements counted
  --tenant --username --password   its credentials (default bench / bench / bench-password); the
                           tenant also names the databases (entityctl_<tenant>, <tenant>_floor)
  --plugins-dir <dir>      entityctl's plugins folder (default: test/bench/plugin, the demo with
                           the indexes of WORKLOAD.md §3a, which the floor's tables have too)
  --database-url <url>     PostgreSQL server (default $TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres)
  --workload-dir <dir>     WORKLOAD.md, workload.json, gen-dataset.mjs (default $BENCH_WORKLOAD_DIR or test/bench/workload)
  --pool-size <n>          PostgreSQL connections per system: floor pool, entityctl PoolSizePerTenant
                           (default 8; with --tenants, entityctl's own default)
  --keep-databases         do not drop the bench_ databases at the end
  --w2-orders <n>          orders whose lines W2 patches, 3 lines each (default 64: the 16 writers
                           on 16 orders at a time); 6 puts two or three writers on the lines of
                           each order at once (contended writes)
  --scale <n>              the dataset n times larger (10: 1,000,000 orders, ~4,000,000 lines;
                           .work/data-x<n>), answers checked against its own expected results

Other measurements (entityctl alone, instead of the comparison):
  --soak [s]               soak: the workload's Q1, Q3, Q4 and W2 with hostile requests beside
                           them for s seconds (default 300); PASS when the process stays up,
                           its RSS stays within 10% of its level after minute 1, no PostgreSQL
                           connection is left once idle and no workload request failed.
                           --connections applies.
  --soak-minutes <m>       the same, for m minutes
  --tenants <n>            n tenants on one server (named <--tenant>-000 …, default benchtenant-000 …),
                           shared round robin by --connections clients
                           signing in and sending key reads for --duration seconds (default 30);
                           key-read and sign-in percentiles, PostgreSQL connections sampled
                           against Database:MaxConnections, RSS per open tenant
  --max-connections <n>    entityctl's Database:MaxConnections (default: entityctl's, 40)
  --heavy                  two tenants; key-read p50/p99 on each, alone and while 4 clients send a
                           nested lambda filter to the first (--duration s per phase, default 10)
  --heavy-orders <n>       orders per tenant of the heavy run (default 3000)
  --workflow               one tenant; workflows of 200 requests (POST of an order with a line):
                           time of request 1, 50, 100, 200 and of the commit; PASS when request
                           200 costs at most 3 times request 1
  --workflow-runs <n>      workflows of the workflow run, medians taken (default 5)`

/** Seconds of `--soak` given without a value. */
export const DEFAULT_SOAK_SECONDS = 300
const DEFAULT_TENANTS_SECONDS = 30

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: withSoakValue(argv),
    options: {
      smoke: { type: 'boolean', default: false },
      only: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '16' },
      'floor-only': { type: 'boolean', default: false },
      'stack-floor': { type: 'boolean', default: false },
      'entityctl-url': { type: 'string' },
      'entityctl-database': { type: 'string' },
      tenant: { type: 'string', default: 'bench' },
      username: { type: 'string', default: 'bench' },
      password: { type: 'string', default: 'bench-password' },
      'plugins-dir': { type: 'string' },
      'database-url': { type: 'string' },
      'workload-dir': { type: 'string' },
      'pool-size': { type: 'string' },
      'keep-databases': { type: 'boolean', default: false },
      soak: { type: 'string' },
      'soak-minutes': { type: 'string' },
      tenants: { type: 'string' },
      'max-connections': { type: 'string' },
      heavy: { type: 'boolean', default: false },
      'heavy-orders': { type: 'string' },
      scale: { type: 'string' },
      workflow: { type: 'boolean', default: false },
      'workflow-runs': { type: 'string' },
      'w2-orders': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    process.exit(0)
  }
  const smoke = values.smoke
  const tenants = values.tenants !== undefined ? positive(values.tenants, 'tenants') : undefined
  const soakSeconds = values['soak-minutes'] !== undefined
    ? positive(values['soak-minutes'], 'soak-minutes') * 60
    : values.soak !== undefined ? positive(values.soak, 'soak') : undefined
  if ([soakSeconds !== undefined, tenants !== undefined, values.heavy, values.workflow].filter(Boolean).length > 1) {
    throw new Error('--soak, --tenants, --heavy and --workflow are separate runs: give one')
  }
  const defaultDuration = tenants !== undefined ? DEFAULT_TENANTS_SECONDS : smoke ? 1 : 10
  return {
    smoke,
    only: values.only?.split(',').map((id) => id.trim().toUpperCase()).filter(Boolean),
    connections: positive(values.connections, 'connections'),
    warmupSeconds: values.warmup !== undefined ? nonNegative(values.warmup, 'warmup') : smoke ? 0.5 : 2,
    durationSeconds: values.duration !== undefined ? positive(values.duration, 'duration') : defaultDuration,
    floorOnly: values['floor-only'],
    stackFloor: values['stack-floor'],
    entityctlUrl: values['entityctl-url'],
    entityctlDatabase: values['entityctl-database'],
    tenant: values.tenant,
    tenantGiven: argv.some((arg) => arg === '--tenant' || arg.startsWith('--tenant=')),
    username: values.username,
    password: values.password,
    pluginsDir: resolve(values['plugins-dir'] ?? join(BENCH_DIR, 'plugin')),
    serverUrl: values['database-url'] ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    workloadDir: resolve(values['workload-dir'] ?? process.env.BENCH_WORKLOAD_DIR ?? join(BENCH_DIR, 'workload')),
    poolSize: values['pool-size'] !== undefined ? positive(values['pool-size'], 'pool-size') : 8,
    poolSizeGiven: values['pool-size'] !== undefined,
    keepDatabases: values['keep-databases'],
    countedRequests: smoke ? 3 : 10,
    // A smoke run's figures are not judged, and beside the test suite the cluster is never quiet:
    // one look, noted in the results, then on (two waits of up to 3 s before each of its 18
    // measurements were most of its load phase).
    quietTimeoutMs: smoke ? 0 : 30_000,
    soakSeconds,
    tenants,
    maxConnections: values['max-connections'] !== undefined ? positive(values['max-connections'], 'max-connections') : undefined,
    heavy: values.heavy,
    heavyOrders: values['heavy-orders'] !== undefined ? positive(values['heavy-orders'], 'heavy-orders') : 3000,
    scale: values.scale !== undefined ? wholeNumber(values.scale, 'scale') : 1,
    workflow: values.workflow,
    workflowRuns: values['workflow-runs'] !== undefined ? positive(values['workflow-runs'], 'workflow-runs') : 5,
    w2Orders: values['w2-orders'] !== undefined ? wholeNumber(values['w2-orders'], 'w2-orders') : 64,
  }
}

function wholeNumber(text: string, name: string): number {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number of at least 1, not "${text}"`)
  return value
}

/** `--soak` without a number (last, or before another flag) means the default duration. */
function withSoakValue(argv: string[]): string[] {
  return argv.flatMap((arg, i) =>
    arg === '--soak' && !/^\d/.test(argv[i + 1] ?? '') ? [arg, String(DEFAULT_SOAK_SECONDS)] : [arg])
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
