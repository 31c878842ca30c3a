import { watch } from 'node:fs'
import { constants as osConstants } from 'node:os'
import type { Command } from 'commander'
import type { Logger } from 'pino'
import { loadConfig, projectPath } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import type { Model } from '../../server/model/model.ts'
import { startServer } from '../../server/start.ts'
import { watchForStalls } from '../../server/stall-watchdog.ts'
import { configFileOf } from '../config-file.ts'
import { unreachable } from '../database-hint.ts'

/** How long a burst of file events (an editor's save is several) is gathered into one reload. */
const SETTLE_MS = 150

export async function serve(options: { port?: number; host?: string; watch?: boolean; migrate?: boolean }, command: Command): Promise<void> {
  const configPath = configFileOf(command)
  // commander's --no-migrate: false when given, true otherwise; only the flag overrides the config.
  const migrate = options.migrate === false ? false : undefined
  const start = (model?: Model, port = options.port) =>
    startServer({ configPath, port, host: options.host, model, migrate }).catch((error) => {
      // Any tenant's own connection string may be the one: the start migrates every tenant.
      const config = loadConfig(configPath)
      throw unreachable(error, config, config.Tenants.keys()) ?? error
    })
  // A signal while starting (migrations can take minutes) ends it at once, saying so: a
  // migration cut off is rolled back by PostgreSQL, and an embedded PostgreSQL this start left
  // running is taken over by the next one.
  const stopStarting = (signal: NodeJS.Signals) => {
    process.stderr.write(`entityctl: ${signal} received while starting; stopped before serving\n`)
    process.exit(128 + osConstants.signals[signal])
  }
  process.once('SIGINT', stopStarting).once('SIGTERM', stopStarting)
  let server = await start()
  process.removeListener('SIGINT', stopStarting).removeListener('SIGTERM', stopStarting)
  // Everything said from here on goes through the server's log, so the log stays one kind of line.
  const logger = () => server.logger
  let stopping = false
  let reloading: Promise<void> = Promise.resolve()
  const stop = (signal: NodeJS.Signals) => {
    // A second signal is an operator's Ctrl-C again, or a supervisor escalating: it does not
    // wait for the graceful stop. As a signal while starting, it leaves PostgreSQL to roll back
    // what was cut off, and an embedded PostgreSQL to be taken over by the next start.
    if (stopping) {
      const msg = `${signal} received again while shutting down: stopping now, requests in flight are cut`
      exitAfterLog(logger(), 128 + osConstants.signals[signal], () => logger().warn({ signal }, msg))
      return
    }
    stopping = true
    logger().info({ signal }, `${signal} received, shutting down`)
    reloading
      .then(() => server.stop())
      .then(
        () => process.exit(0),
        (error) => exitAfterLog(logger(), 1, () => logger().error({ err: error }, 'shutdown failed')),
      )
  }
  process.on('SIGINT', () => stop('SIGINT'))
  process.on('SIGTERM', () => stop('SIGTERM'))
  // The reload signal of daemons, and what a closed terminal sends: it must not end the
  // server (Node's default), which would cut its requests and drop its unwritten log lines.
  process.on('SIGHUP', () => {
    logger().info({ signal: 'SIGHUP' }, 'SIGHUP received, reading the config file again')
    void server.reloadConfig()
  })
  guardProcess(logger)
  watchEventLoop(logger, server.config.ApiOptions.PluginTimeoutSeconds)
  if (!options.watch) return

  // serve --watch: a changed plugin file loads the plugins anew; only a model that loads
  // replaces the one serving (a server restarted in this process, on the same port).
  const folder = projectPath(server.config.Server.PluginsDir)
  const port = Number(new URL(server.url).port)
  const reload = async (file: string) => {
    logger().info({ file }, 'plugins changed, reloading')
    let model: Model
    try {
      model = await loadModel(folder, true)
    } catch (error) {
      logger().error({ error: (error as Error).message }, 'plugins not reloaded: the ones loaded before keep serving')
      return
    }
    const previous = server.model
    await server.stop()
    try {
      server = await start(model, port)
    } catch (error) {
      // The new model may fail to start (a wrong EncryptionKey found by its migration): serve the old
      // one. A migration refused because it would lose data does not fail it: that tenant answers 503.
      server = await start(previous, port)
      logger().error({ error: (error as Error).message }, 'plugins not reloaded: the ones loaded before keep serving')
    }
  }
  let timer: NodeJS.Timeout | undefined
  watch(folder, (_event, file) => {
    if (stopping || (file && !/\.(ts|js|mjs|mts)$/.test(file))) return
    clearTimeout(timer)
    timer = setTimeout(() => (reloading = reloading.then(() => (stopping ? undefined : reload(String(file ?? folder))))), SETTLE_MS)
  })
  logger().info({ folder }, 'watching the plugins folder')
}

/**
 * The last line of defence; errors of the database driver and of sockets are handled where
 * they arise (pool and client 'error' listeners, the request's error boundary). A promise
 * rejected with nobody waiting for it changed nothing half-way: say so and serve on. An
 * exception thrown out of a callback may have left any state half-changed: say so and exit
 * 1, for the supervisor to start a clean process (README, "Running it as a service").
 */
function guardProcess(logger: () => Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger().error({ err: reason }, 'unhandled rejection (serving on)')
  })
  process.on('uncaughtException', (error) => {
    exitAfterLog(logger(), 1, () => logger().fatal({ err: error }, 'uncaught exception, exiting'))
  })
}

/**
 * Plugin code in an endless loop blocks every request of every tenant, and no timer can end
 * it: past ApiOptions:PluginTimeoutSeconds the watchdog stops it and the process exits 1
 * naming where it was stuck, for the supervisor to start a clean one (stall-watchdog.ts).
 */
function watchEventLoop(logger: () => Logger, limitSeconds: number): void {
  if (limitSeconds <= 0) return
  watchForStalls(limitSeconds * 1000, ({ blockedMs, stack }) => {
    const msg = `the event loop was blocked for ${(blockedMs / 1000).toFixed(1)} s (over ApiOptions:PluginTimeoutSeconds), at ${stack[0] ?? 'an unknown place'}: exiting`
    exitAfterLog(logger(), 1, () => logger().fatal({ blockedMs, stack }, msg))
  })
}

/** Logs, then exits once the line is written (the log is batched: http/log-lines.ts). */
function exitAfterLog(logger: Logger, code: number, log: () => void): void {
  log()
  logger.flush(() => process.exit(code))
  // A log that cannot be written must not keep a broken process alive.
  setTimeout(() => process.exit(code), 2000).unref()
}
