// Loads every .ts/.js file of the plugins folder (Node runs TypeScript directly, so an
// integrator needs no build step) and binds them into the Model.

import { registerHooks } from 'node:module'
import { readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { PluginDecl } from './declarations.ts'
import type { Model } from './model.ts'
import { buildModel, type LoadedPlugin } from './build-model.ts'
import { PluginError, pluginImportError, withDeclarationPosition } from './plugin-error.ts'
import { systemPlugin } from './system-entities.ts'

const PLUGIN_FILE = /\.(ts|js|mjs|mts)$/
const PLUGIN_API = 'entityctl/plugin'
const PLUGIN_API_URL = new URL('../plugin.ts', import.meta.url).href

let hooked = false
/** Imports of a reload get a new URL (?reload=<n>): Node keeps every module it imported by URL. */
let reloads = 0

/**
 * Plugins import 'entityctl/plugin'. Inside the project that resolves as the package's own
 * export; a plugins folder elsewhere (Server:PluginsDir) has no such package above it, so the
 * name is resolved here for every plugin, wherever it lives.
 */
function resolvePluginApi(): void {
  if (hooked) return
  hooked = true
  registerHooks({
    resolve: (specifier, context, next) => (specifier === PLUGIN_API ? { url: PLUGIN_API_URL, shortCircuit: true } : next(specifier, context)),
  })
}

/** `fresh`: import the files anew (serve --watch), not the modules imported before. */
export async function loadPlugins(folder: string, fresh = false): Promise<LoadedPlugin[]> {
  const query = fresh ? `?reload=${++reloads}` : ''
  const dir = resolve(folder)
  let files: string[]
  try {
    files = (await readdir(dir)).filter((f) => PLUGIN_FILE.test(f) && !f.endsWith('.d.ts')).sort()
  } catch (error) {
    throw new PluginError(dir, 'plugins folder', `cannot be read: ${(error as Error).message}`)
  }
  resolvePluginApi()
  const plugins: LoadedPlugin[] = []
  for (const file of files) {
    const source = join(folder, file)
    const absolute = join(dir, file)
    let module: { default?: PluginDecl }
    try {
      module = await import(pathToFileURL(absolute).href + query)
    } catch (error) {
      // A syntax error, or a mistake in the use of the plugin API while the file runs:
      // said with the line, the column and the code around it.
      throw pluginImportError(source, absolute, error)
    }
    if (!module.default) throw new PluginError(source, 'default export', 'missing: export default plugin({ entities: [...] })')
    plugins.push({ source, decl: module.default })
  }
  return plugins
}

export async function loadModel(folder: string, fresh = false): Promise<Model> {
  const plugins = await loadPlugins(folder, fresh)
  try {
    return buildModel(plugins, [systemPlugin])
  } catch (error) {
    throw error instanceof PluginError ? withDeclarationPosition(error) : error
  }
}
