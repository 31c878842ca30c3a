// `entityctl serve`: opens the database server (configured or embedded), loads the plugins,
// brings every tenant's schema up to date (migrations/migrate-at-start.ts: a tenant whose
// migration is refused answers 503, the others serve), and serves HTTP until SIGINT/SIGTERM, when it
// lets in-flight requests finish, closes the pools and stops the embedded database. With
// Server:MetricsPort set, a second listener serves the Prometheus metrics.
//
// It is the composition root: createServices builds every long-lived service once, and each
// subsystem is handed what it declares it needs (auth/auth-services.ts,
// odata/handlers/odata-services.ts, workflows/workflow-services.ts, scheduled-job.ts). No
// subsystem imports this file.

import type { Server } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import pino, { type Logger } from 'pino'
import { ConfigError, jwtPreviousSigningKeys, loadConfig, portVariable, projectPath, type Config } from './config/load-config.ts'
import { loadModel } from './model/load-plugins.ts'
import { printPublishedDocuments } from './odata/published-documents.ts'
import type { Model } from './model/model.ts'
import { openDatabaseServer, type DatabaseServer } from './tenancy/database-server.ts'
import { TenantRegistry } from './tenancy/tenant-registry.ts'
import { migrateAtStart } from './migrations/migrate-at-start.ts'
import type { SchemaGate } from './migrations/schema-gate.ts'
import { createApp, type AppServices } from './http/app.ts'
import { markShutdownCut } from './http/client-disconnect.ts'
import { createHttpServer } from './http/http-server.ts'
import { LogLines } from './http/log-lines.ts'
import { prettyLine } from './http/pretty-log.ts'
import { startWorkflowSweep } from './workflows/workflow-sweep.ts'
import { startHousekeeping } from './auth/housekeeping.ts'
import { watchConfig } from './config/config-watch.ts'
import { keysChangedSinceStart } from './config/restart-keys.ts'
import { NO_METRICS, PrometheusMetrics, type Metrics } from './metrics/metrics.ts'
import { namingPolicy } from './model/naming.ts'
import { AccessService } from './auth/access-service.ts'
import { AccessTokens } from './auth/access-tokens.ts'
import { SignInThrottle } from './auth/sign-in-throttle.ts'
import { ReadPlanCache } from './odata/plan/read-plan-cache.ts'
import { listenForScrapes, type MetricsListener } from './metrics/metrics-listener.ts'
import { API_LISTENER, listenError, METRICS_LISTENER, type ListenerSettings } from './listen-error.ts'

export interface StartOptions {
  readonly configPath?: string
  readonly port?: number
  readonly host?: string
  /** The model to serve, already loaded (serve --watch); default: loaded from Server:PluginsDir. */
  readonly model?: Model
  /** Destination of the log, default stdout. */
  readonly logger?: Logger
  /**
   * false (`serve --no-migrate`): tenants whose schema is behind the plugins are not migrated
   * but answer 503 until `entityctl migrate` has run. Default: Server:MigrateOnStart.
   */
  readonly migrate?: boolean
}

export interface RunningServer {
  readonly url: string
  /** The metrics listener's `…/metrics`; absent when Server:MetricsPort is 0. */
  readonly metricsUrl?: string
  readonly config: Config
  readonly model: Model
  /** The server's log: whoever runs it (cli/actions/serve.ts) logs through it too, so every line is alike. */
  readonly logger: Logger
  /** Reads the config file again now, as its watch does on a change (SIGHUP). */
  reloadConfig(): Promise<void>
  stop(): Promise<void>
}

const LOG_FLUSH_MS = 1000

export async function startServer(options: StartOptions = {}): Promise<RunningServer> {
  const config = loadConfig(options.configPath, process.env, { serving: true })
  const port = options.port ?? portVariable(process.env.PORT) ?? config.Server.Port
  // Batched log writes (http/log-lines.ts): a write per request line was a system call per
  // request. Lines wait at most a second (LOG_FLUSH_MS) and are flushed on stop.
  // JSON lines, but for a person at a terminal (pretty-log.ts).
  const lines = options.logger ? undefined : new LogLines(undefined, undefined, process.stdout.isTTY ? prettyLine : undefined)
  const logger = options.logger ?? pino({ level: config.Server.LogLevel }, lines)
  const logFlush = setInterval(() => lines?.writePending(), LOG_FLUSH_MS).unref()
  const model = options.model ?? (await loadModel(projectPath(config.Server.PluginsDir)))
  printPublishedDocuments({ model, naming: namingPolicy(config.ApiOptions.EnableLowerCamelCase), config })
  logger.info({ entities: [...model.entities.keys()].filter((n) => !model.entities.get(n)!.system) }, 'plugins loaded')
  const host = options.host ?? config.Server.Host
  if (port !== 0 && port === config.Server.MetricsPort && host === config.Server.MetricsHost) {
    throw new Error(`Server:MetricsPort ${port} is the port the API listens on (Server:Port, --port or PORT); give the metrics another.`)
  }
  // A start that cannot listen (a second `serve` on the same port) must not migrate the
  // tenants first, under the server that holds the port.
  await ensureFree(port, host, API_LISTENER)
  if (config.Server.MetricsPort > 0) await ensureFree(config.Server.MetricsPort, config.Server.MetricsHost, METRICS_LISTENER)
  const database = await openDatabaseServer(config, logger)
  let tenants: TenantRegistry | undefined
  let scrapes: MetricsListener | undefined
  try {
    tenants = new TenantRegistry(config, model, database.url)
    const schemaGate = await migrateAtStart(config, model, tenants, logger, { migrate: options.migrate ?? config.Server.MigrateOnStart })
    tenants.admitWith(schemaGate.admit)
    const metrics = config.Server.MetricsPort > 0 ? new PrometheusMetrics(tenants) : undefined
    const services = createServices({ config, model, tenants, logger, metrics, schemaGate })
    const app = createApp(services)
    const server = createHttpServer(app.callback(), config, logger, metrics)
    // Before the API's listener, so that a failure here leaves nothing listening.
    if (metrics) scrapes = await listenForScrapes(metrics, config.Server.MetricsHost, config.Server.MetricsPort, logger)
    await listen(server, port, host)
    const address = server.address()
    // An IPv6 address is written in brackets in a URL (RFC 3986), as the metrics listener writes it.
    const url = `http://${host.includes(':') ? `[${host}]` : host}:${typeof address === 'object' && address ? address.port : port}`
    // Tenants follow the config file (tenant add/remove/disable/enable, a key changed), and so
    // do the JWT signing keys (a rotation); other keys wait for a restart, which the log says
    // once for each set of them changed.
    let awaitingRestart = ''
    const configWatch = watchConfig(config.path, async (next) => {
      const keys = keysChangedSinceStart(config, next)
      if (keys.length > 0 && keys.join() !== awaitingRestart) logger.warn({ keys }, 'config keys changed that apply only at the next restart')
      awaitingRestart = keys.join()
      followSigningKeys(services.auth.tokens, next, logger)
      const change = await tenants!.reload(next.Tenants)
      if (change.added.length + change.removed.length + change.changed.length > 0) logger.info(change, 'tenants changed')
    }, logger)
    // And at once when the CLI announces a change it waits for (access-listener.ts followConfig).
    services.access.followConfig(tenants.serverUrl, (digest) => configWatch.announced(digest))
    const workflowSweep = startWorkflowSweep(services)
    const housekeeping = startHousekeeping(services)
    const unavailable = schemaGate.blocked().map((blocked) => blocked.tenant)
    logger.info(
      { url, metrics: scrapes?.url, tenants: [...config.Tenants.keys()], ...(unavailable.length > 0 ? { unavailable } : {}), database: database.embedded ? 'embedded' : 'external' },
      'entityctl serving',
    )
    const stop = once(async () => {
      logger.info('shutting down: finishing in-flight requests')
      configWatch.close()
      const abandoned = await closeServer(server, config.Server.ShutdownTimeoutSeconds * 1000, () => markShutdownCut(app))
      if (abandoned > 0) logger.warn({ connections: abandoned }, 'shutting down: requests still in flight after Server:ShutdownTimeoutSeconds were abandoned')
      await scrapes?.close()
      await workflowSweep.stop()
      await housekeeping.stop()
      await services.close()
      // An abandoned request unwinds once its connection is cut (its statement cancelled, its
      // wait for plugin code ended); one that does not must not keep the process alive.
      const held = tenants!.inUse()
      if (!(await settledWithin(tenants!.close(), DRAIN_GRACE_MS))) {
        logger.warn({ tenants: held }, 'shutting down: database connections still held by abandoned requests are left to close with the process')
      }
      await database.stop()
      logger.info('stopped')
      clearInterval(logFlush)
      await flushed(logger)
    })
    return { url, metricsUrl: scrapes?.url, config, model, logger, reloadConfig: () => configWatch.reload(), stop }
  } catch (error) {
    clearInterval(logFlush)
    await flushed(logger)
    await scrapes?.close()
    await tenants?.close()
    await database.stop()
    throw error
  }
}

/** Signs with the config's JWT:SigningKey from now on, and verifies with it and JWT:PreviousSigningKeys; keys that are not valid change nothing. */
function followSigningKeys(tokens: AccessTokens, next: Config, logger: Logger): void {
  try {
    if (tokens.useKeys(next.JWT)) logger.info({ previousSigningKeys: jwtPreviousSigningKeys(next.JWT).length }, 'JWT signing keys changed: new access tokens are signed with the new SigningKey')
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    logger.warn({ err: error.message }, 'JWT signing keys changed but are not valid; the keys before stay in use')
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, host, API_LISTENER)))
    server.listen(port, host, () => resolve())
  })
}

/** Refuses a port this process could not listen on (another program's), before anything starts; port 0 is any free one. */
function ensureFree(port: number, host: string, settings: ListenerSettings): Promise<void> {
  if (port === 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const probe = createNetServer()
    probe.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, host, settings)))
    probe.listen(port, host, () => probe.close(() => resolve()))
  })
}

/** How long the tenants' pools may take to drain once the requests left running were cut. */
const DRAIN_GRACE_MS = 2000

/**
 * Stops accepting, lets requests in flight finish, and closes keep-alive connections as
 * soon as they fall idle (close() alone would wait for clients to hang up); whatever is
 * still running after the timeout is cut. Resolves with the number of connections cut.
 */
function closeServer(server: Server, timeoutMs: number, beforeCut: () => void): Promise<number> {
  return new Promise((resolve) => {
    const reaper = setInterval(() => server.closeIdleConnections(), 50)
    const timer = setTimeout(() => {
      clearInterval(reaper)
      server.getConnections((_error, count) => {
        beforeCut()
        server.closeAllConnections()
        resolve(count ?? 0)
      })
    }, timeoutMs)
    timer.unref()
    server.close(() => {
      clearTimeout(timer)
      clearInterval(reaper)
      resolve(0)
    })
    server.closeIdleConnections()
  })
}

/** Whether `work` settled within `ms`; it runs on either way. */
function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    timer.unref()
    work.then(
      () => resolve(true),
      () => resolve(true),
    ).finally(() => clearTimeout(timer))
  })
}

function once(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined
  return () => (running ??= work())
}

export type { DatabaseServer }

/** What the server is built from: configuration, the model, the tenants, the log, and the metrics (absent: none). */
export interface ServiceDeps {
  readonly config: Config
  readonly model: Model
  readonly tenants: TenantRegistry
  readonly logger: Logger
  readonly metrics?: Metrics
  /** Tenants refused for their schema at start (migrations/migrate-at-start.ts). */
  readonly schemaGate?: SchemaGate
}

/** The long-lived services, built once per server; each subsystem is handed the part it declares (AuthServices, OdataServices, WorkflowServices, JobServices). */
export interface Services extends AppServices {
  /** Releases what the services hold (listeners, timers); called on shutdown. */
  close(): Promise<void>
}

/** The composition root: builds every service once and wires them to each other. */
export function createServices(deps: ServiceDeps): Services {
  const access = new AccessService(deps)
  return {
    ...deps,
    naming: namingPolicy(deps.config.ApiOptions.EnableLowerCamelCase),
    access,
    readPlans: new ReadPlanCache(),
    metrics: deps.metrics ?? NO_METRICS,
    auth: {
      tokens: new AccessTokens(deps.config.JWT, (tenant) => deps.tenants.has(tenant)),
      throttle: new SignInThrottle(deps.config.SignIn),
    },
    close: () => access.close(),
  }
}

/** Resolves once the logger's buffered lines are written (or the write failed: nothing to wait for). */
function flushed(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()))
}
