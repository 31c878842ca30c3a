// `entityctl doctor`: every check an admin would make by hand before or after a failed start,
// each with what to do when it fails. Nothing is changed: no migration, no canary written, no
// tenant opened for requests (the embedded PostgreSQL is started if it is not running, as
// every admin command does, and stopped again).

import type { Command } from 'commander'
import { createServer } from 'node:net'
import type pg from 'pg'
import { ConfigError, loadConfig, portVariable, projectPath, type Config, type TenantConfig } from '../../server/config/load-config.ts'
import type { Model } from '../../server/model/model.ts'
import { withServerClient } from '../../server/tenancy/database-server.ts'
import { CliError, EXIT } from '../cli-error.ts'
import { configFileOf } from '../config-file.ts'
import { printResult, progress, table } from '../output.ts'

type Status = 'ok' | 'warn' | 'fail'

interface Check {
  readonly check: string
  readonly status: Status
  readonly detail: string
  /** What to do about a warning or a failure. */
  readonly fix?: string
}

const MIN_NODE = [22, 17] as const
const CONNECT_TIMEOUT_MS = 5_000

export async function doctor(options: { json?: boolean }, command: Command): Promise<void> {
  const checks: Check[] = [nodeVersion()]
  const path = configFileOf(command)
  const steps = progress(options)
  let config: Config | undefined
  try {
    config = loadConfig(path, process.env, { serving: true })
    checks.push({ check: 'config', status: 'ok', detail: `${path}: valid (${config.Tenants.size} tenant${config.Tenants.size === 1 ? '' : 's'})` })
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    checks.push({ check: 'config', status: 'fail', detail: error.problems.join('; '), fix: `Correct ${path} (or the environment variable named); \`entityctl config keys\` lists every key.` })
  }
  if (config) {
    steps.step('loading the plugins')
    const loaded = await plugins(config)
    checks.push(loaded.check)
    steps.step('checking the ports')
    // $PORT overrides Server:Port for serve (server/start.ts): the port checked is the one it would listen on.
    const portSet = portVariable(process.env.PORT)
    checks.push(await port('port', config.Server.Host, portSet ?? config.Server.Port, portSet === undefined ? API_LISTENER : API_LISTENER_ON_PORT))
    if (config.Server.MetricsPort) checks.push(await port('metrics port', config.Server.MetricsHost, config.Server.MetricsPort, METRICS_LISTENER))
    steps.step(config.Database.ConnectionString ? 'connecting to the database server' : 'starting the embedded PostgreSQL')
    checks.push(...(await databases(config, loaded.model, steps.step)))
  }
  steps.done()
  const failed = checks.filter((c) => c.status === 'fail').length
  const warned = checks.filter((c) => c.status === 'warn').length
  printResult(options, { healthy: failed === 0, checks }, () =>
    [
      table(
        checks.map((c) => ({ check: c.check, status: c.status === 'ok' ? 'ok' : c.status === 'warn' ? 'WARN' : 'FAIL', detail: c.detail })),
        ['check', 'status', 'detail'],
      ),
      ...checks.filter((c) => c.fix).map((c) => `${c.status === 'fail' ? 'FAIL' : 'WARN'} ${c.check}: ${c.fix}`),
      failed ? `${failed} check${failed === 1 ? '' : 's'} failed${warned ? `, ${warned} warning${warned === 1 ? '' : 's'}` : ''}.` : `Healthy${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`,
    ].join('\n'),
  )
  // The report is the output; the exit code says whether anything failed (warnings do not).
  if (failed) throw new CliError(`${failed} check${failed === 1 ? '' : 's'} failed.`, { code: 'Failed', exitCode: EXIT.failure, silent: true })
}

function nodeVersion(): Check {
  const [major, minor] = process.versions.node.split('.').map(Number)
  const good = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1])
  return good
    ? { check: 'node', status: 'ok', detail: `Node.js ${process.versions.node}` }
    : { check: 'node', status: 'fail', detail: `Node.js ${process.versions.node}, older than ${MIN_NODE.join('.')}`, fix: 'Run ./install.sh: it installs Node 24 into .runtime/node, which bin/entityctl prefers.' }
}

/** The plugins check, and the model when they load (the tenants' schemas are checked against it). */
async function plugins(config: Config): Promise<{ check: Check; model?: Model }> {
  const folder = projectPath(config.Server.PluginsDir)
  try {
    const { loadModel } = await import('../../server/model/load-plugins.ts')
    const { namingPolicy } = await import('../../server/model/naming.ts')
    const { printPublishedDocuments } = await import('../../server/odata/published-documents.ts')
    const model = await loadModel(folder)
    // What serve checks at its start beyond loading: the documents the plugins publish.
    printPublishedDocuments({ model, naming: namingPolicy(config.ApiOptions.EnableLowerCamelCase), config })
    return { check: { check: 'plugins', status: 'ok', detail: `${folder}: ${model.entities.size} entities` }, model }
  } catch (error) {
    const message = ((error as { summary?: string }).summary ?? (error as Error).message).split('\n')[0]
    return { check: { check: 'plugins', status: 'fail', detail: message, fix: `Correct the plugin at the position named (\`entityctl migrate\` shows the code around it), or move it out of ${folder}.` } }
  }
}

/** A listener of `entityctl serve`: the key setting its port, and how it answers when it runs there. */
interface Listener {
  readonly key: string
  /** The key, and the option that overrides it if any. */
  readonly setBy: string
  isServing(origin: string): Promise<boolean>
}

const PROBE_MS = 2_000
const API_LISTENER: Listener = {
  key: 'Server:Port',
  setBy: 'Server:Port (or --port)',
  isServing: (origin) => fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(PROBE_MS) }).then((response) => response.ok),
}
/** The API listener when $PORT sets its port. */
const API_LISTENER_ON_PORT: Listener = { ...API_LISTENER, key: 'PORT', setBy: 'PORT (it overrides Server:Port) or --port' }
const METRICS_LISTENER: Listener = {
  key: 'Server:MetricsPort',
  setBy: 'Server:MetricsPort',
  isServing: (origin) =>
    fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(PROBE_MS) }).then(async (response) => response.ok && (await response.text()).includes('entityctl_http_requests_total')),
}

/** Whether the port can be listened on; one in use by a running entityctl is only a warning. */
async function port(check: string, host: string, number: number, listener: Listener): Promise<Check> {
  const { key, setBy } = listener
  if (number === 0) return { check, status: 'ok', detail: `${key} 0: any free port` }
  const problem = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = createServer()
    probe.once('error', (error) => resolve(error))
    probe.listen(number, host, () => probe.close(() => resolve(undefined)))
  })
  if (!problem) return { check, status: 'ok', detail: `${host}:${number} is free` }
  if (problem.code === 'EADDRINUSE') {
    const entityctl = await listener.isServing(`http://${host.includes(':') ? `[${host}]` : host}:${number}`).catch(() => false)
    if (entityctl) return { check, status: 'warn', detail: `${host}:${number}: an entityctl server is serving there`, fix: `A second \`entityctl serve\` needs another ${setBy}.` }
    return { check, status: 'fail', detail: `${host}:${number} is in use by another program`, fix: `Stop that program, or choose another ${setBy}.` }
  }
  return { check, status: 'fail', detail: `${host}:${number}: ${problem.message}`, fix: problem.code === 'EACCES' ? `Ports below 1024 need privileges: choose ${key} 1024 or above.` : `Check ${key} and Server:Host.` }
}

/** The database server, then per tenant: a connection, its schema (against `model`, when the plugins load) and its key canary. */
async function databases(config: Config, model: Model | undefined, step: (text: string) => void): Promise<Check[]> {
  const { openDatabaseServer, databaseUrl } = await import('../../server/tenancy/database-server.ts')
  const where = config.Database.ConnectionString ? 'Database:ConnectionString' : `the embedded PostgreSQL (Database:EmbeddedPort ${config.Database.EmbeddedPort})`
  let server: Awaited<ReturnType<typeof openDatabaseServer>> | undefined
  try {
    server = await openDatabaseServer(config, { info: () => {}, warn: () => {}, error: () => {} })
    await withClient(server.url, (client) => client.query('select 1'))
  } catch (error) {
    await server?.stop()
    return [{ check: 'database', status: 'fail', detail: `${where}: ${(error as Error).message}`, fix: `Start that PostgreSQL, or correct ${config.Database.ConnectionString ? 'Database:ConnectionString' : 'Database:EmbeddedPort / Database:EmbeddedDataDir'} in ${config.path}.` }]
  }
  try {
    const checks: Check[] = [{ check: 'database', status: 'ok', detail: `${where}: reachable` }]
    for (const tenant of config.Tenants.values()) {
      step(`checking tenant '${tenant.name}'`)
      checks.push(await tenantCheck(tenant, tenant.ConnectionString || databaseUrl(server.url, tenant.Database), model))
    }
    if (config.Tenants.size === 0) checks.push({ check: 'tenants', status: 'warn', detail: 'no tenant is configured', fix: 'Add one: `entityctl tenant add <name>`.' })
    return checks
  } finally {
    await server.stop()
  }
}

async function tenantCheck(tenant: TenantConfig, url: string, model: Model | undefined): Promise<Check> {
  const check = `tenant ${tenant.name}`
  const setting = tenant.ConnectionString ? `Tenants:${tenant.name}:ConnectionString` : `Tenants:${tenant.name}:Database`
  const { recordedSchemaVersion } = await import('../../server/migrations/migration-journal.ts')
  const found = await withClient(url, async (client) => {
    const table = await client.query(`select to_regclass('"_EncryptionCheck"') is not null as present`)
    if (!table.rows[0].present) return 'unmigrated' as const
    const { rows } = await client.query<{ Canary: string }>(`select "Canary" from "_EncryptionCheck" where "Id" = 1`)
    return { canary: rows[0]?.Canary ?? null, schemaVersion: await recordedSchemaVersion(client) }
  }).catch((error: Error) => error)
  if (found instanceof Error) return { check, status: 'fail', detail: `cannot connect: ${found.message}`, fix: `Check ${setting}; does the database exist on that server?` }
  if (found === 'unmigrated') return { check, status: 'fail', detail: 'the database has no entityctl schema', fix: `Run \`entityctl migrate --tenant ${tenant.name}\` (or reattach the right database in ${setting}).` }
  const { canary } = found
  if (canary === null) return { check, status: 'warn', detail: 'reachable; no key canary yet', fix: 'The next `entityctl serve` or `migrate` records it.' }
  const { propertyCipher } = await import('../../server/tenancy/property-encryption.ts')
  try {
    propertyCipher(tenant.name, tenant.EncryptionKey, tenant.PreviousEncryptionKey).decrypt(canary)
  } catch {
    return {
      check,
      status: 'fail',
      detail: 'EncryptionKey does not open the data (the key canary)',
      fix: `Put back the key the data was encrypted with (an exported key file: \`tenant remove --export-key\` or \`tenant backup\` wrote it) in Tenants:${tenant.name}:EncryptionKey.`,
    }
  }
  if (tenant.PreviousEncryptionKey) return { check, status: 'warn', detail: 'reachable; a key rotation was left unfinished', fix: `Finish it: \`entityctl tenant rotate-key ${tenant.name}\`.` }
  const { schemaVersion } = await import('../../server/migrations/schema-version.ts')
  if (model && found.schemaVersion !== schemaVersion(model)) {
    return {
      check,
      status: 'warn',
      detail: 'reachable, EncryptionKey opens the canary; its schema is not the one the plugins make',
      fix: `\`entityctl migrate --plan --tenant ${tenant.name}\` shows the change; a start or \`entityctl migrate\` makes it (with Server:MigrateOnStart false, the tenant answers 503 until then), unless it would lose data: then the tenant answers 503 until \`entityctl migrate --allow-data-loss --tenant ${tenant.name}\` applies it.`,
    }
  }
  return { check, status: 'ok', detail: 'reachable, schema present, EncryptionKey opens the canary' }
}

/** A check's connection: one that does not answer within CONNECT_TIMEOUT_MS is a failed check, not a hang. */
function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  return withServerClient(url, work, { connectTimeoutMs: CONNECT_TIMEOUT_MS })
}
