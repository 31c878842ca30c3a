// After a command has written the config file: the running server instances apply it before
// the command goes on or returns (server/auth/access-listener.ts announceConfigChange). An
// instance this does not reach still follows the file's watch within a moment, so a failed
// announcement is a warning, not the command's failure: the file is written.

import { loadConfig, projectPath, type Config } from '../server/config/load-config.ts'

/** Announces the file's current content on the deployment's database server (none given: nothing runs). */
export function configAnnouncer(path: string, serverUrl: string | undefined): () => Promise<void> {
  return async () => {
    if (!serverUrl) return
    const [{ configDigest }, { announceConfigChange }] = await Promise.all([
      import('../server/config/config-watch.ts'),
      import('../server/auth/access-listener.ts'),
    ])
    try {
      await announceConfigChange(serverUrl, configDigest(path))
    } catch (error) {
      process.stderr.write(`entityctl: running servers were not told of the change (${(error as Error).message}); they follow the config file within a moment.\n`)
    }
  }
}

/**
 * The deployment's database server if it is running, without starting the embedded one (for
 * commands that only write the file); undefined when none runs or the file does not load.
 */
export async function runningServerUrl(path: string): Promise<string | undefined> {
  let config: Config
  try {
    config = loadConfig(path)
  } catch {
    return undefined
  }
  if (config.Database.ConnectionString) return config.Database.ConnectionString
  const { isEmbeddedRunning } = await import('../server/persistence/embedded-postgres/start-embedded.ts')
  return (await isEmbeddedRunning(projectPath(config.Database.EmbeddedDataDir)))?.connectionString
}
