/** A plugin that cannot be loaded: the message names the file, the entity and the property. */
export class PluginError extends Error {
  constructor(source: string, where: string, problem: string) {
    super(`${source}: ${where}: ${problem}`)
    this.name = 'PluginError'
  }
}
