// `entityctl service install|uninstall` as real processes, into a unit folder of the test's own
// (--unit-dir): the unit is written and checked with `systemd-analyze verify` where that exists,
// never enabled or started.

import { execFile, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { afterAll, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../..', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'entityctl-service-'))
const unitDir = join(dir, 'units')
const environmentFile = join(dir, 'secrets', 'entityctl.env')
const config = join(dir, 'entityctl.json')
writeFileSync(config, JSON.stringify({ Server: { ShutdownTimeoutSeconds: 25 }, JWT: { SigningKey: randomBytes(32).toString('base64url') } }))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Six commands a test: on a busy machine each takes seconds; a command is killed at 60 s.
const SLOW = 120_000
const HAS_SYSTEMD_ANALYZE = spawnSync('systemd-analyze', ['--version']).status === 0

function entityctl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(join(root, 'bin/entityctl'), ['--config', config, ...args], { env: { ...process.env, CI: '1' }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    )
  })
}

it('writes a unit that restarts on failure, reads secrets from an environment file and logs to the journal; systemd-analyze accepts it', { timeout: SLOW }, async () => {
  const installed = await entityctl('service', 'install', '--user', 'nobody', '--unit-dir', unitDir, '--environment-file', environmentFile, '--json')
  expect(installed.code, installed.stderr).toBe(0)
  const unitPath = join(unitDir, 'entityctl.service')
  expect(JSON.parse(installed.stdout)).toEqual({
    unit: unitPath, user: 'nobody', envFile: environmentFile, envCreated: true,
    next: ['systemctl daemon-reload', 'systemctl enable --now entityctl', 'journalctl -u entityctl -f'],
  })
  const unit = readFileSync(unitPath, 'utf8')
  for (const line of [
    `ExecStart=${join(root, 'bin/entityctl')} --config ${config} serve`,
    `WorkingDirectory=${root.replace(/\/$/, '')}`,
    'User=nobody',
    'Restart=on-failure',
    `EnvironmentFile=-${environmentFile}`,
    'StandardOutput=journal',
    'TimeoutStopSec=35',
    'KillMode=mixed',
    'WantedBy=multi-user.target',
  ]) expect(unit.split('\n'), line).toContain(line)
  // The secrets file: created for the operator to fill in, readable by its owner only.
  expect(statSync(environmentFile).mode & 0o777).toBe(0o600)
  if (HAS_SYSTEMD_ANALYZE) {
    const verified = spawnSync('systemd-analyze', ['verify', unitPath], { encoding: 'utf8' })
    expect(verified.status, verified.stderr).toBe(0)
  }

  const again = await entityctl('service', 'install', '--unit-dir', unitDir, '--environment-file', environmentFile, '--json')
  expect(again.code).toBe(1)
  expect(JSON.parse(again.stdout).error.message).toContain('--force')
  const forced = await entityctl('service', 'install', '--user', 'daemon', '--unit-dir', unitDir, '--environment-file', environmentFile, '--force', '--json')
  expect(forced.code, forced.stderr).toBe(0)
  expect(JSON.parse(forced.stdout).envCreated).toBe(false)
  expect(readFileSync(unitPath, 'utf8')).toContain('User=daemon')

  const removed = await entityctl('service', 'uninstall', '--unit-dir', unitDir, '--json')
  expect(removed.code, removed.stderr).toBe(0)
  expect(existsSync(unitPath)).toBe(false)
  expect(existsSync(environmentFile)).toBe(true)
  const gone = await entityctl('service', 'uninstall', '--unit-dir', unitDir, '--json')
  expect(gone.code).toBe(1)
  expect(JSON.parse(gone.stdout).error.code).toBe('NotFound')
})

it('leaves a unit it did not write alone, and refuses a bad name or user with exit 2', { timeout: SLOW }, async () => {
  const foreign = join(unitDir, 'other.service')
  writeFileSync(foreign, '[Service]\nExecStart=/bin/true\n')
  const refused = await entityctl('service', 'uninstall', '--name', 'other', '--unit-dir', unitDir)
  expect(refused.code).toBe(1)
  expect(refused.stderr).toContain('was not written by')
  expect(existsSync(foreign)).toBe(true)
  expect((await entityctl('service', 'install', '--name', 'a b', '--unit-dir', unitDir)).code).toBe(2)
  expect((await entityctl('service', 'install', '--user', 'x;y', '--unit-dir', unitDir, '--environment-file', environmentFile)).code).toBe(2)
  // A well-formed name of no user: the unit would be written, and systemd would refuse to start it.
  const noUser = await entityctl('service', 'install', '--user', 'no-such-user-here', '--name', 'nouser', '--unit-dir', unitDir, '--environment-file', environmentFile, '--json')
  expect([noUser.code, JSON.parse(noUser.stdout).error]).toEqual([2, { code: 'UsageError', message: expect.stringContaining("there is no user 'no-such-user-here' on this machine") }])
  expect(existsSync(join(unitDir, 'nouser.service'))).toBe(false)
})

it('says the environment file it created holds commented examples, as it does', { timeout: SLOW }, async () => {
  const examples = join(dir, 'examples', 'entityctl.env')
  const installed = await entityctl('service', 'install', '--user', 'nobody', '--name', 'said', '--unit-dir', unitDir, '--environment-file', examples)
  expect(installed.code, installed.stderr).toBe(0)
  expect(readFileSync(examples, 'utf8')).toContain('# JWT__SigningKey=')
  expect(installed.stdout).toContain(`secrets from ${examples}, created with commented examples to fill in)`)
})
