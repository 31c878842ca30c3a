import type { Command } from 'commander'
import { SECTIONS, TENANT_KEYS, type KeySpec } from '../../server/config/schema.ts'
import { ConfigError, loadConfig, type Config } from '../../server/config/load-config.ts'
import { configFileOf } from '../config-file.ts'
import { printResult } from '../output.ts'
import { CliError } from '../cli-error.ts'

/** Valid: the file and its tenants. Not valid: every problem at once, exit 2. */
export function check(options: { json?: boolean }, command: Command): void {
  const path = configFileOf(command)
  let loaded: Config
  try {
    loaded = loadConfig(path, process.env, { serving: true })
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    const count = `${error.problems.length} problem${error.problems.length === 1 ? '' : 's'}`
    throw new CliError(`${path}: ${count}:\n  ${error.problems.join('\n  ')}`, { code: 'ConfigError', extra: { path, problems: error.problems } })
  }
  printResult(options, { path: loaded.path, tenants: [...loaded.Tenants.keys()], valid: true }, () =>
    `${loaded.path}: valid (${loaded.Tenants.size} tenant${loaded.Tenants.size === 1 ? '' : 's'})`)
}

export function keys(options: { json?: boolean }): void {
  const rows: { key: string; type: string; default: string | number | boolean | null; doc: string }[] = []
  const add = (key: string, spec: KeySpec) => rows.push({ key, type: spec.type, default: 'default' in spec ? (spec.default ?? null) : null, doc: spec.doc })
  for (const [section, specs] of Object.entries(SECTIONS)) for (const [key, spec] of Object.entries(specs)) add(`${section}:${key}`, spec)
  for (const [key, spec] of Object.entries(TENANT_KEYS)) add(`Tenants:<name>:${key}`, spec)
  printResult(options, rows, () => {
    const lines = ['| Key | Type | Default | Meaning |', '|---|---|---|---|']
    for (const row of rows) {
      // A tenant key without a default has none to show; JWT:SigningKey has none because it is required.
      const def = row.default !== null ? ` \`${String(row.default)}\`` : row.key.startsWith('Tenants:') ? '' : ' (required)'
      lines.push(`| \`${row.key}\` | ${row.type} |${def} | ${row.doc} |`)
    }
    return lines.join('\n')
  })
}
