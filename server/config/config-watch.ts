// Follows the config file while the server runs, for its tenants (`entityctl tenant add`,
// `remove`, `disable`, `enable`, a key changed) and its JWT signing keys (a rotation,
// start.ts followSigningKeys): the file stays the one source of truth, and
// every instance that reads it learns of a change within a moment, without a restart. The
// directory is watched, not the file: the CLI replaces the file by a rename
// (load-config.ts writeConfigFile), which a watch on the old file would not see. A file that
// does not load (half edited by hand) or is missing is logged and ignored: the tenants stay as they were.
//
// A watch learns of a change only after a moment, and each instance at its own moment; a CLI
// command that must know every instance has applied its change (rotate-key before it
// re-encrypts) announces the file's digest through PostgreSQL (auth/access-listener.ts
// announceConfigChange), and `announced` applies the file at once when it holds that content.
//
//   const watch = watchConfig(config.path, (next) => tenants.reload(next.Tenants), logger)
//   await watch.announced(digest)
//   watch.close()

import { createHash } from 'node:crypto'
import { existsSync, readFileSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'
import { loadConfig, type Config } from './load-config.ts'

/** Changes arrive as several events (write, rename); one reload after they settle. */
const SETTLE_MS = 50

export interface ConfigWatch {
  /** Applies the file now if it holds the content of this digest (another deployment's file, or a newer one, is left to the watch). */
  announced(digest: string): Promise<void>
  /** Applies the file now, whatever it holds (SIGHUP). */
  reload(): Promise<void>
  close(): void
}

/** What the CLI announces after writing the file, and an instance compares with the file it reads. */
export function configDigest(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex')
}

export function watchConfig(path: string, onChange: (config: Config) => Promise<unknown>, logger: Logger): ConfigWatch {
  const name = basename(path)
  let timer: NodeJS.Timeout | undefined
  let reloading = Promise.resolve()
  // Whether the last reload warned: the next one that loads says so, or that warning would stand as the last word.
  let warned = false
  // One reload at a time, in the order asked, whether the watch or an announcement asked.
  const reload = (digest?: string) => {
    reloading = reloading.then(async () => {
      if (digest !== undefined && configDigest(path) !== digest) return
      // Gone for a moment (moved away, or deleted before a tool writes the new one): loaded,
      // the missing file would be the defaults, without a single tenant.
      if (!existsSync(path)) {
        logger.warn({ config: path }, 'config file is missing; tenants unchanged until it is back')
        warned = true
        return
      }
      let config: Config
      try {
        config = loadConfig(path)
      } catch (error) {
        logger.warn({ err: (error as Error).message, config: path }, 'config file changed but does not load; tenants unchanged')
        warned = true
        return
      }
      if (warned) logger.info({ config: path }, 'config file loads again')
      warned = false
      try {
        await onChange(config)
      } catch (error) {
        logger.error({ err: error }, 'applying the changed config failed')
      }
    }).catch((error) => logger.warn({ err: (error as Error).message, config: path }, 'config file cannot be read; tenants unchanged'))
    return reloading
  }
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(dirname(path), (_event, changed) => {
      if (changed !== null && changed !== name) return
      clearTimeout(timer)
      timer = setTimeout(() => void reload(), SETTLE_MS)
    })
    watcher.on('error', (error) => logger.warn({ err: error.message, config: path }, 'config file is no longer watched; tenant changes need a restart'))
    watcher.unref()
  } catch (error) {
    logger.warn({ err: (error as Error).message, config: path }, 'config file cannot be watched; tenant changes need a restart')
  }
  return {
    announced: (digest) => reload(digest),
    reload: () => reload(),
    close() {
      clearTimeout(timer)
      watcher?.close()
    },
  }
}
