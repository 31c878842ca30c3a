// `entityctl service install|uninstall`: the systemd unit of README "Running it as a service",
// written for this project folder and config file. systemd restarts the process when it exits
// non-zero (cli/actions/serve.ts exits 1 after an uncaught exception), reads secrets from an
// environment file only root can read, and keeps the log, JSON lines on stdout, in the journal.

import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { Command } from 'commander'
import { loadConfig, PROJECT_DIR } from '../../server/config/load-config.ts'
import { CliError, usageError } from '../cli-error.ts'
import { configFileOf } from '../config-file.ts'
import { printResult } from '../output.ts'
import { quotedName } from '../../server/model/control-characters.ts'

/** The first line of every unit we write: uninstall removes only files that have it. */
const MARK = '# Written by `entityctl service install`; remove with `entityctl service uninstall`.'
const UNIT_NAME = /^[A-Za-z0-9_.@-]{1,100}$/

interface InstallOptions { user?: string; name: string; unitDir?: string; environmentFile: string; force?: boolean; json?: boolean }

export function installService(options: InstallOptions, command: Command): void {
  const configPath = configFileOf(command)
  const config = loadConfig(configPath)
  const name = unitName(options.name)
  const unitPath = join(unitDir(options.unitDir), `${name}.service`)
  if (existsSync(unitPath) && !options.force) {
    throw new CliError(`${unitPath} exists already; pass --force to replace it (or \`entityctl service uninstall\` first).`)
  }
  const user = options.user ?? ownerOf(PROJECT_DIR)
  if (!/^[a-z_][a-z0-9_.-]*\$?$/i.test(user)) throw usageError(`--user: ${quotedName(user)} is not a user name.`)
  if (!userExists(user)) throw usageError(`--user: there is no user ${quotedName(user)} on this machine; systemd would refuse to start the service. Create the user, or name another.`)
  const envFile = resolve(options.environmentFile)
  const unit = unitText({ user, envFile, configPath, stopSeconds: config.Server.ShutdownTimeoutSeconds + 10 })
  try {
    mkdirSync(dirname(unitPath), { recursive: true })
    writeFileSync(unitPath, unit)
    const envCreated = !existsSync(envFile)
    if (envCreated) {
      mkdirSync(dirname(envFile), { recursive: true })
      writeFileSync(envFile, ENV_TEMPLATE, { mode: 0o600 })
    }
    const next = [`systemctl daemon-reload`, `systemctl enable --now ${name}`, `journalctl -u ${name} -f`]
    printResult(options, { unit: unitPath, user, envFile, envCreated, next }, () =>
      [`Wrote ${unitPath} (runs as ${user}; secrets from ${envFile}${envCreated ? ', created with commented examples to fill in' : ''}).`, 'Then:', ...next.map((line) => `  ${line}`)].join('\n'),
    )
  } catch (error) {
    throw cannotWrite(error, unitPath)
  }
}

export function uninstallService(options: { name: string; unitDir?: string; json?: boolean }): void {
  const name = unitName(options.name)
  const unitPath = join(unitDir(options.unitDir), `${name}.service`)
  if (!existsSync(unitPath)) throw new CliError(`${unitPath} does not exist: nothing to uninstall.`, { code: 'NotFound' })
  if (!readFileSync(unitPath, 'utf8').startsWith(MARK)) {
    throw new CliError(`${unitPath} was not written by \`entityctl service install\`; remove it yourself if it should go.`)
  }
  const before = [`systemctl disable --now ${name}`]
  try {
    rmSync(unitPath)
  } catch (error) {
    throw cannotWrite(error, unitPath)
  }
  printResult(options, { removed: unitPath, next: ['systemctl daemon-reload'] }, () =>
    `Removed ${unitPath}. If it was running, ${before[0]} should have come first; now: systemctl daemon-reload`,
  )
}

function unitText(o: { user: string; envFile: string; configPath: string; stopSeconds: number }): string {
  const bin = join(PROJECT_DIR, 'bin', 'entityctl')
  return `${MARK}
[Unit]
Description=entityctl OData service
After=network-online.target postgresql.service
Wants=network-online.target

[Service]
Type=simple
User=${o.user}
WorkingDirectory=${quoted(PROJECT_DIR)}
ExecStart=${quoted(bin)} --config ${quoted(o.configPath)} serve
# Secrets (JWT__SigningKey, Database__ConnectionString, …) as environment overrides; the leading
# '-' lets the service start while the file does not exist.
EnvironmentFile=-${o.envFile}
Restart=on-failure
RestartSec=2
# SIGTERM lets requests in flight finish (Server:ShutdownTimeoutSeconds, plus time to stop).
KillSignal=SIGTERM
# To serve alone: the embedded PostgreSQL, in the same control group, must keep answering
# those requests until serve stops it; whatever is left afterwards is killed.
KillMode=mixed
TimeoutStopSec=${o.stopSeconds}
# stdout is not a terminal here, so the log is JSON lines; the journal keeps them.
StandardOutput=journal
StandardError=journal
SyslogIdentifier=entityctl
NoNewPrivileges=true

[Install]
WantedBy=multi-user.target
`
}

const ENV_TEMPLATE = `# Environment of the entityctl service (read by systemd as root; keep it mode 600).
# Any config key as Section__Key=value overrides the config file, e.g.:
# JWT__SigningKey=...
# Database__ConnectionString=postgres://entityctl:...@127.0.0.1:5432/postgres
`

function unitName(name: string): string {
  if (!UNIT_NAME.test(name)) throw usageError(`--name: ${quotedName(name)} is not a unit name (letters, digits, _ . @ -).`)
  return name
}

function unitDir(option: string | undefined): string {
  return resolve(option ?? process.env.ENTITYCTL_UNIT_DIR ?? '/etc/systemd/system')
}

/** systemd splits ExecStart= and friends at spaces: a path with one must be quoted. */
function quoted(path: string): string {
  return /[\s"'\\]/.test(path) ? JSON.stringify(path) : path
}

function ownerOf(path: string): string {
  const uid = statSync(path).uid
  try {
    return execFileSync('id', ['-nu', String(uid)], { encoding: 'utf8' }).trim()
  } catch {
    throw usageError(`The owner of ${path} (uid ${uid}) has no name; pass --user.`)
  }
}

function userExists(user: string): boolean {
  try {
    execFileSync('id', ['-u', user], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

function cannotWrite(error: unknown, path: string): Error {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EACCES' || code === 'EPERM') return new CliError(`Cannot write ${path}: permission denied. Run it as root (sudo), or pass --unit-dir.`)
  return error as Error
}
