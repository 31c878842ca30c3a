// `entityctl openapi`: the document GET /api/openapi.json serves, from the same model and
// casing, for code generators and API gateways that read a file. It is JSON either way;
// --json only changes how an error is printed.

import type { Command } from 'commander'
import { loadConfig, projectPath } from '../../server/config/load-config.ts'
import { loadModel } from '../../server/model/load-plugins.ts'
import { namingPolicy } from '../../server/model/naming.ts'
import { openApiDocument } from '../../server/odata/openapi/openapi-document.ts'
import { configFileOf } from '../config-file.ts'

export async function openapi(_options: { json?: boolean }, command: Command): Promise<void> {
  const config = loadConfig(configFileOf(command))
  const model = await loadModel(projectPath(config.Server.PluginsDir))
  const document = openApiDocument({ model, naming: namingPolicy(config.ApiOptions.EnableLowerCamelCase), config })
  // Some 150 kB: into a pipe it is written in parts, and the CLI exits once the action
  // returns (main.ts), so the action waits until all of it has been handed on.
  await new Promise<void>((resolve, reject) => process.stdout.write(`${document}\n`, (error) => (error ? reject(error) : resolve())))
}
