// Follows the config file while the server runs, for its tenants (`entityctl tenant add`,
// `remove`, `disable`, `enable`, a key changed): the file stays the one source of truth, and
// every instance that reads it learns of a change within a moment, without a restart. The
// directory is watched, not the file: the CLI replaces the file by a rename
// (load-config.ts writeConfigFile), which a watch on the old file would not see. A file that
// does not load (half edited by hand) is logged and ignored: the tenants stay as they were.
//
//   const watch = watchConfig(config.path, (next) => tenants.reload(next.Tenants), logger)
//   watch.close()

import { watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'
import { loadConfig, type Config } from './load-config.ts'

/** Changes arrive as several events (write, rename); one reload after they settle. */
const SETTLE_MS = 50

export interface ConfigWatch {
  close(): void
}

export function watchConfig(path: string, onChange: (config: Config) => Promise<unknown>, logger: Logger): ConfigWatch {
  const name = basename(path)
  let timer: NodeJS.Timeout | undefined
  let reloading = Promise.resolve()
  const reload = () => {
    reloading = reloading.then(async () => {
      let config: Config
      try {
        config = loadConfig(path)
      } catch (error) {
        logger.warn({ err: (error as Error).message, config: path }, 'config file changed but does not load; tenants unchanged')
        return
      }
      try {
        await onChange(config)
      } catch (error) {
        logger.error({ err: error }, 'applying the changed config failed')
      }
    })
  }
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(dirname(path), (_event, changed) => {
      if (changed !== null && changed !== name) return
      clearTimeout(timer)
      timer = setTimeout(reload, SETTLE_MS)
    })
    watcher.on('error', (error) => logger.warn({ err: error.message, config: path }, 'config file is no longer watched; tenant changes need a restart'))
    watcher.unref()
  } catch (error) {
    logger.warn({ err: (error as Error).message, config: path }, 'config file cannot be watched; tenant changes need a restart')
  }
  return {
    close() {
      clearTimeout(timer)
      watcher?.close()
    },
  }
}
