// CPU per W2 write without HTTP, for working on the write engine: entityctl's unit of work
// (load, rules, one write statement) against the floor's one hand-written statement, each
// run in this process, one write at a time or --concurrency in flight, on the databases a bench run kept
// (`npm run bench -- --keep-databases`). process.cpuUsage() counts this process only, so
// neither the load generator nor the HTTP stack blurs the figure; PostgreSQL's CPU for the same
// writes is read from /proc (postgres-cpu.ts: PostgreSQL on this machine, otherwise quiet).
//
//   node test/bench/write-cpu.ts [--writes 3000] [--rounds 3] [--concurrency 1]
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { loadConfig, projectPath } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { poolSession } from '../../server/persistence/session.ts'
import { parentsReachedBy } from '../../server/rules/dependencies.ts'
import { TenantRegistry } from '../../server/tenancy/tenant-registry.ts'
import { patchLineQuantity } from './floor-sql.ts'
import { postgresCpuMs, postmasterOf } from './postgres-cpu.ts'
import { WORK_DIR } from './options.ts'

const { values: args } = parseArgs({
  options: {
    writes: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1' },
    tenant: { type: 'string', default: 'bench' },
    'floor-database': { type: 'string', default: 'bench_floor' },
    help: { type: 'boolean', default: false },
  },
})
if (args.help) {
  process.stdout.write(`node test/bench/write-cpu.ts [--writes n] [--rounds n] [--concurrency n] [--tenant bench] [--floor-database bench_floor]
CPU (user and system µs) per W2 write in this process, and PostgreSQL's: entityctl's unit of
work against the floor's statement, alternating, after \`npm run bench -- --keep-databases\`. --concurrency n
keeps n writes in flight (on different orders), as n HTTP connections would.\n`)
  process.exit(0)
}
const writes = positive('writes')
const rounds = positive('rounds')
const concurrency = positive('concurrency')
const WARM_UP = 300

/** Each line's quantity as a system last wrote it, and the next one: 1 to 7 in turn, never the same. */
class Quantities {
  readonly #last = new Map<string, number>()

  constructor(rows: readonly { Guid: string; Quantity: number }[]) {
    for (const row of rows) this.#last.set(row.Guid, Number(row.Quantity))
  }

  next(line: string): number {
    const quantity = ((this.#last.get(line) ?? 0) % 7) + 1
    this.#last.set(line, quantity)
    return quantity
  }
}

main().catch((error: Error & { code?: string }) => {
  const hint = error.code === '3D000' ? '; run `npm run bench -- --keep-databases` first' : ''
  process.stderr.write(`write-cpu: ${error.message}${hint}\n`)
  process.exitCode = 1
})

async function main(): Promise<void> {
  // The configuration the bench run wrote: its Database:ConnectionString, tenant and keys.
  const config = loadConfig(join(WORK_DIR, 'entityctl.json'))
  const model = await loadModel(projectPath(config.Server.PluginsDir))
  const tenants = new TenantRegistry(config, model, config.Database.ConnectionString)
  const floorUrl = new URL(config.Database.ConnectionString)
  floorUrl.pathname = `/${args['floor-database']}`
  // The floor gets as many connections as one tenant of entityctl.
  const floor = new pg.Pool({ connectionString: floorUrl.toString(), max: config.Database.PoolSizePerTenant })
  const OrderLine = model.entities.get('OrderLine')!

  try {
    const postmaster = await postmasterOf(floor, 'write-cpu')
    const ran = await tenants.use(args.tenant, async (database) => {
      const { rows } = await database.pool.query<{ Guid: string; Quantity: number }>(
        `select distinct on ("Order_Guid") "Guid", "Quantity" from "OrderLine" order by "Order_Guid", "Guid" limit 2000`,
      )
      const lines = rows.map((row) => row.Guid)
      const floorRows = await floor.query<{ Guid: string; Quantity: number }>(`select "Guid", "Quantity" from "OrderLine" where "Guid" = any($1::uuid[])`, [lines])
      // Every write changes its line's quantity: one that set the quantity the line has would
      // change nothing, and cost a system less than a write.
      const ourQuantities = new Quantities(rows)
      const floorQuantities = new Quantities(floorRows.rows)
      const session = poolSession(database)
      const reached = parentsReachedBy(model, OrderLine, ['Quantity'])
      const entityctlWrite = (i: number) =>
        session.write(async (unit) => {
          const key = lines[i % lines.length]
          const [line] = await unit.load([{ entity: OrderLine, key, parents: reached }])
          line.values.Quantity = ourQuantities.next(key)
        })
      const floorWrite = (i: number) => {
        const key = lines[i % lines.length]
        return floor.query({ name: 'w2', text: patchLineQuantity, values: [key, floorQuantities.next(key)] })
      }

      for (let round = 1; round <= rounds; round++) {
        const ours = await measure(entityctlWrite, postmaster)
        const theirs = await measure(floorWrite, postmaster)
        process.stdout.write(
          `round ${round}: entityctl user ${ours.user} sys ${ours.system} µs/write (PostgreSQL ${ours.postgres}), ` +
            `floor user ${theirs.user} sys ${theirs.system} µs/write (PostgreSQL ${theirs.postgres}), ` +
            `floor/entityctl CPU ${((theirs.user + theirs.system) / (ours.user + ours.system)).toFixed(2)} here, ` +
            `${(theirs.postgres / ours.postgres).toFixed(2)} in PostgreSQL\n`,
        )
      }
      return true
    })
    if (!ran) throw new Error(`no tenant '${args.tenant}' in ${join(WORK_DIR, 'entityctl.json')}; run \`npm run bench -- --keep-databases\` first.`)
  } finally {
    await floor.end()
    await tenants.close()
  }
}

/** µs per write: this process's user and system CPU, and PostgreSQL's (all its processes: /proc counts in 10 ms ticks). */
async function measure(write: (i: number) => Promise<unknown>, postmaster: number): Promise<{ user: number; system: number; postgres: number }> {
  await inFlight(WARM_UP, write)
  const postgresBefore = postgresCpuMs(postmaster)
  const before = process.cpuUsage()
  await inFlight(writes, write)
  const used = process.cpuUsage(before)
  const postgres = postgresCpuMs(postmaster) - postgresBefore
  return { user: Math.round(used.user / writes), system: Math.round(used.system / writes), postgres: Math.round((postgres * 1000) / writes) }
}

/** `count` writes, `concurrency` at a time; writes in flight together are on different orders. */
async function inFlight(count: number, write: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  const writer = async () => {
    while (next < count) await write(next++)
  }
  await Promise.all(Array.from({ length: concurrency }, writer))
}

function positive(name: 'writes' | 'rounds' | 'concurrency'): number {
  const value = Number(args[name])
  if (Number.isInteger(value) && value >= 1) return value
  process.stderr.write(`write-cpu: --${name} must be a whole number of at least 1, not '${args[name]}'\n`)
  process.exit(2)
}
