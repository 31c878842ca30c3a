import { Command } from 'commander'
import { SECTIONS, TENANT_KEYS } from '../../server/config/schema.ts'
import { configPath, loadConfig } from '../../server/config/load-config.ts'
import { printResult } from '../output.ts'

export function configCommand(): Command {
  const config = new Command('config').description('Inspect the configuration.')
  config
    .command('check')
    .description('Validate the config file and environment overrides; print the file used.')
    .option('--json', 'print the result as JSON')
    .action((options: { json?: boolean }, command: Command) => {
      const loaded = loadConfig(configPath(command.optsWithGlobals().config))
      printResult(options, { path: loaded.path, tenants: [...loaded.Tenants.keys()], valid: true }, () =>
        `${loaded.path}: valid (${loaded.Tenants.size} tenant${loaded.Tenants.size === 1 ? '' : 's'})`)
    })
  config
    .command('keys')
    .description('List every key with its type, default and meaning (Markdown).')
    .action(() => {
      const lines = ['| Key | Type | Default | Meaning |', '|---|---|---|---|']
      for (const [section, keys] of Object.entries(SECTIONS)) {
        for (const [key, spec] of Object.entries(keys)) {
          const def = 'default' in spec ? `\`${String(spec.default)}\`` : '(required)'
          lines.push(`| \`${section}:${key}\` | ${spec.type} | ${def} | ${spec.doc} |`)
        }
      }
      for (const [key, spec] of Object.entries(TENANT_KEYS)) lines.push(`| \`Tenants:<name>:${key}\` | ${spec.type} | | ${spec.doc} |`)
      process.stdout.write(`${lines.join('\n')}\n`)
    })
  return config
}
