// The CLI as a product, run as real processes (bin/entityctl): what help and usage errors
// import, --json results and errors ({"error":{"code","message"}}) and the exit codes of every
// command family (0 ok, 1 failure, 2 usage or configuration, 130 Ctrl-C at a prompt), a missing
// config file, completion scripts, plugin errors with positions and a database that is down.
// Databases: the test PostgreSQL only (TEST_DATABASE_URL); the one tenant made here is dropped.

import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { TEST_DATABASE_URL } from '../support/test-server.ts'
import { databaseUrl, dropDatabase } from '../../server/tenancy/database-server.ts'
import { FIXTURE_PLUGINS } from '../auth/helpers.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))
const bin = join(root, 'bin/entityctl')
const broken = (name: string) => fileURLToPath(new URL(`./fixtures/broken-plugins/${name}`, import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'entityctl-cli-product-'))
// Spawned commands start Node and, for most, connect to PostgreSQL: on a busy machine that
// takes seconds each, so these tests get more than the default 30 s.
const SLOW = 120_000

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  json(): any
}

function run(args: readonly string[], env: Record<string, string> = {}, command = bin, prefix: readonly string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    // Killed if it outlives its test, so that a timed-out test leaves no process behind.
    const child = spawn(command, [...prefix, ...args], { env: { ...process.env, CI: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: SLOW })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, json: () => JSON.parse(stdout) }))
  })
}

/** `entityctl --config <file> ...args` */
const entityctl = (config: string, ...args: string[]) => run(['--config', config, ...args])

/** A config file; the test PostgreSQL unless `content` says otherwise, never the embedded one. */
function writeConfig(name: string, content: Record<string, unknown>): string {
  const path = join(dir, name)
  const base = { Server: { LogLevel: 'silent', PluginsDir: FIXTURE_PLUGINS }, Database: { ConnectionString: TEST_DATABASE_URL }, JWT: { SigningKey: randomBytes(32).toString('base64url') } }
  writeFileSync(path, JSON.stringify({ ...base, ...content }))
  return path
}

const tenant = `cli-${randomBytes(3).toString('hex')}`
const database = `entityctl_${tenant.replaceAll('-', '_')}`

afterAll(async () => {
  await dropDatabase(TEST_DATABASE_URL, database)
  rmSync(dir, { recursive: true, force: true })
})

describe('help, usage and completion load no server', () => {
  const tracer = fileURLToPath(new URL('./fixtures/trace-imports.ts', import.meta.url))
  const traced = (...args: string[]) => run(args, {}, process.execPath, ['--disable-warning=ExperimentalWarning', '--import', tracer, join(root, 'cli/main.ts')])

  it('prints help with the exit codes, and imports nothing of the server for help, usage errors or completion', { timeout: SLOW }, async () => {
    const [help, tenantHelp, usage, completion, keys] = await Promise.all([
      traced('--help'),
      traced('tenant', 'add', '--help'),
      traced('tenant', 'list', '--bogus'),
      traced('completion', 'bash'),
      traced('config', 'keys'),
    ])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Exit codes: 0 ok, 1 failure, 2 usage or configuration error, 130 interrupted')
    expect(tenantHelp.stdout).toContain('--json')
    expect(usage.code).toBe(2)
    expect(completion.code).toBe(0)
    for (const result of [help, tenantHelp, usage, completion]) expect(result.stderr).not.toContain('loaded ')
    // The tracer works: a command that reads the config schema shows it.
    expect(keys.stderr).toContain('/server/config/schema.ts')
  })
})

describe('usage and configuration errors exit 2', () => {
  it('says what is wrong with the command line, as JSON with --json', { timeout: SLOW }, async () => {
    const results = await Promise.all([
      run(['tenant', 'list', '--bogus', '--json']),
      run(['bogus', '--json']),
      run(['tenant', '--json']),
      run(['serve', '--port', 'x', '--json']),
      run(['completion', 'fish', '--json']),
      run(['tenant', 'list', '--bogus']),
    ])
    for (const result of results) expect(result.code, result.stderr).toBe(2)
    const errors = results.slice(0, 5).map((r) => r.json().error)
    expect(errors.map((e) => e.code)).toEqual(['UsageError', 'UsageError', 'UsageError', 'UsageError', 'UsageError'])
    expect(errors.map((e) => e.message)).toEqual([
      "unknown option '--bogus'",
      "unknown command 'bogus'",
      'a subcommand is required; see --help',
      expect.stringContaining("--port must be 0..65535, not 'x'"),
      expect.stringContaining("'fish' is invalid"),
    ])
    expect(results[5].stderr).toContain("error: unknown option '--bogus'")
  })

  it('refuses a $PORT that is no port, naming it, before anything starts; config check and doctor name it too', { timeout: SLOW }, async () => {
    const config = writeConfig('port-variable.json', {})
    const problem = "Configuration PORT: must be a port from 0 to 65535 (it overrides Server:Port), not 'eighty'"
    const [serve, check, doctor] = await Promise.all([
      run(['--config', config, 'serve', '--json'], { PORT: 'eighty' }),
      run(['--config', config, 'config', 'check', '--json'], { PORT: 'eighty' }),
      run(['--config', config, 'doctor', '--json'], { PORT: 'eighty' }),
    ])
    expect([serve.code, serve.json().error]).toEqual([2, { code: 'ConfigError', message: problem }])
    // The README: config check and doctor apply the same rules as serve.
    expect([check.code, check.json().error?.problems]).toEqual([2, [problem]])
    expect(doctor.code).toBe(1)
    expect(doctor.json().checks).toContainEqual(expect.objectContaining({ check: 'config', status: 'fail', detail: problem }))
  })

  it('refuses a config file that does not exist, naming it, for every command that reads it', { timeout: SLOW }, async () => {
    const missing = join(dir, 'nowhere', 'entityctl.json')
    // Were the file not required, these would run on defaults: the test PostgreSQL, not the embedded one.
    const env = { Database__ConnectionString: TEST_DATABASE_URL }
    const results = await Promise.all([
      run(['--config', missing, 'tenant', 'list', '--json'], env),
      run(['--config', missing, 'user', 'list', '--tenant', 'acme', '--json'], env),
      run(['--config', missing, 'config', 'check', '--json'], env),
      run(['--config', missing, 'serve', '--port', '0', '--json'], env),
      run(['migrate', '--json'], { ...env, ENTITYCTL_CONFIG: missing }),
      run(['--config', dir, 'tenant', 'list', '--json'], env),
      run(['--config', missing, 'tenant', 'list'], env),
    ])
    for (const result of results) expect(result.code, result.stderr).toBe(2)
    for (const result of results.slice(0, 5)) {
      expect(result.json().error).toEqual({ code: 'ConfigError', message: expect.stringContaining(`Config file ${missing} does not exist`) })
    }
    expect(results[5].json().error.message).toBe(`Config file ${dir} is not a file.`)
    expect(results[6].stderr).toContain(`entityctl: Config file ${missing} does not exist`)
    expect(results[6].stdout).toBe('')
  })

  it('checks a config file and prints the key reference, as JSON too', { timeout: SLOW }, async () => {
    const config = writeConfig('check.json', {})
    const [check, keys, markdown] = await Promise.all([entityctl(config, 'config', 'check', '--json'), run(['config', 'keys', '--json']), run(['config', 'keys'])])
    expect([check.code, check.json()]).toEqual([0, { path: config, tenants: [], valid: true }])
    expect(keys.code).toBe(0)
    expect(keys.json()).toContainEqual({ key: 'Server:Port', type: 'integer', default: 8080, doc: expect.any(String) })
    expect(keys.json()).toContainEqual({ key: 'JWT:SigningKey', type: 'secret', default: null, doc: expect.any(String) })
    expect(markdown.stdout).toContain('| `Server:Port` | integer | `8080` |')
    // The README's Configuration reference is this table, as it says.
    const readme = readFileSync(join(root, 'README.md'), 'utf8')
    const section = readme.slice(readme.indexOf('## Configuration reference'))
    const rows = (text: string) => text.split('\n').filter((line) => line.startsWith('| `'))
    expect(rows(section.slice(0, section.indexOf('\n\n', section.indexOf('| Key |'))))).toEqual(rows(markdown.stdout))
  })
})

describe('completion', () => {
  it('prints bash and zsh scripts made from the command tree; bash completes subcommands and options', { timeout: SLOW }, async () => {
    const [bash, zsh] = await Promise.all([run(['completion', 'bash']), run(['completion', 'zsh'])])
    expect(bash.code).toBe(0)
    expect(bash.stdout).toContain('complete -o default -F _entityctl entityctl')
    expect(zsh.stdout).toContain('compdef _entityctl entityctl')
    expect(zsh.stdout).toContain("'pat issue') candidates=(")
    const script = join(dir, 'completion.bash')
    writeFileSync(script, bash.stdout)
    const complete = (...words: string[]) => {
      const line = `source '${script}'; COMP_WORDS=(entityctl ${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length}; _entityctl; echo "\${COMPREPLY[*]}"`
      return spawnSync('bash', ['-c', line], { encoding: 'utf8' }).stdout.trim().split(' ')
    }
    expect(complete('')).toEqual(expect.arrayContaining(['serve', 'tenant', 'user', 'role', 'responsibility', 'pat', 'migrate', 'config', 'completion']))
    expect(complete('ten')).toEqual(['tenant'])
    expect(complete('tenant', '')).toEqual(expect.arrayContaining(['add', 'list', 'remove']))
    expect(complete('completion', '')).toEqual(expect.arrayContaining(['bash', 'zsh']))
    expect(complete('--config', 'x.json', 'pat', 'issue', '--re')).toEqual(['--responsibility'])
    expect(complete('user', 'add', '--')).toEqual(expect.arrayContaining(['--tenant', '--username', '--password', '--full-access', '--json', '--config', '--help']))
  })
})

describe.skipIf(!existsSync('/usr/bin/zsh') && !existsSync('/bin/zsh'))('completion in zsh', () => {
  it('offers the words that may follow the command path', { timeout: SLOW }, async () => {
    const script = join(dir, 'completion.zsh')
    writeFileSync(script, (await run(['completion', 'zsh'])).stdout)
    // compadd (zsh's) filters by the typed prefix itself; this stand-in prints what it is given.
    const complete = (...words: string[]) => {
      const line = `compdef() { :; }; compadd() { shift; print -r -- "$@"; }; source '${script}'; words=(entityctl ${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length + 1}; _entityctl`
      return spawnSync('zsh', ['-f', '-c', line], { encoding: 'utf8' }).stdout.trim().split(' ')
    }
    expect(complete('tenant', '')).toEqual(['add', 'list', 'remove', 'rotate-key', 'backup', 'restore', 'move', '--config', '--help'])
    expect(complete('--config', 'x.json', 'pat', 'issue', '--re')).toEqual(expect.arrayContaining(['--responsibility', '--json']))
  })
})

describe('plugin errors', () => {
  it('give file, line, column and the code around a syntax error', { timeout: SLOW }, async () => {
    const config = writeConfig('syntax.json', { Server: { LogLevel: 'silent', PluginsDir: broken('syntax') } })
    const [human, json] = await Promise.all([entityctl(config, 'migrate'), entityctl(config, 'migrate', '--json')])
    const file = join(broken('syntax'), 'library.ts')
    expect(human.code).toBe(2)
    expect(human.stderr).toContain(`entityctl: ${file}:8:5: Expected ',', got 'ident'\n`)
    expect(human.stderr).toContain(['  7 |     Pages: p.integer()', '> 8 |     Isbn: p.text().maxLength(13),', '    |     ^'].join('\n'))
    expect(json.code).toBe(2)
    expect(json.json().error).toMatchObject({ code: 'PluginError', message: `${file}:8:5: Expected ',', got 'ident'`, location: { file, line: 8, column: 5 } })
  })

  it('name the nearest correct builder method for a misspelt one, with its position', { timeout: SLOW }, async () => {
    const config = writeConfig('misspelt.json', { Server: { LogLevel: 'silent', PluginsDir: broken('misspelt') } })
    const result = await entityctl(config, 'responsibility', 'sync', '--json')
    const file = join(broken('misspelt'), 'library.ts')
    expect(result.code).toBe(2)
    const error = result.json().error
    expect(error).toMatchObject({ code: 'PluginError', location: { file, line: 7, column: 24 } })
    expect(error.message).toBe(`${file}:7:24: p.integer(...).requird is not a function; did you mean required?`)
    expect(error.frame).toContain('> 7 |     Pages: p.integer().requird(),\n    |                        ^')
  })

  it('stop serve on an entity set the fixed routes would shadow, naming the file, the entity and the name', { timeout: SLOW }, async () => {
    const config = writeConfig('shadowed.json', { Server: { LogLevel: 'silent', PluginsDir: broken('shadowed') } })
    const result = await entityctl(config, 'serve', '--port', '0', '--json')
    const file = join(broken('shadowed'), 'steps.ts')
    expect(result.code).toBe(2)
    expect(result.json().error).toMatchObject({
      code: 'PluginError',
      message: `${file}:7:5: Workflow: the alias 'Workflow' (the entity's name) is reserved: /api/workflow is a fixed route (workflows); rename the entity, or declare its aliases without its name (aliases: [])`,
      location: { file, line: 7, column: 5 },
    })
  })
})

describe('the config file a command rewrites', () => {
  it.skipIf(process.getuid?.() !== 0)('keeps its owner and mode when root (sudo) changes it, so the service user still reads it', { timeout: SLOW }, async () => {
    const config = writeConfig('owned.json', { Tenants: { [`${tenant}-owned`]: { EncryptionKey: randomBytes(32).toString('base64') } } })
    chownSync(config, 65534, 65534)
    chmodSync(config, 0o640)
    const disabled = await entityctl(config, 'tenant', 'disable', `${tenant}-owned`)
    expect(disabled.code, disabled.stderr).toBe(0)
    expect(JSON.parse(readFileSync(config, 'utf8')).Tenants[`${tenant}-owned`].Disabled).toBe(true)
    const file = statSync(config)
    expect([file.uid, file.gid, (file.mode & 0o777).toString(8)]).toEqual([65534, 65534, '640'])
  })
})

describe('a database that cannot be reached', () => {
  // Nothing listens on port 1.
  const down = 'postgres://postgres@127.0.0.1:1/postgres'
  const key = () => randomBytes(32).toString('base64')

  it('names the setting to check: the server connection string, or the tenant’s own', { timeout: SLOW }, async () => {
    const shared = writeConfig('down.json', { Database: { ConnectionString: down }, Tenants: { acme: { EncryptionKey: key() } } })
    const own = writeConfig('own-down.json', { Database: { ConnectionString: TEST_DATABASE_URL }, Tenants: { acme: { ConnectionString: down, EncryptionKey: key() } } })
    const [server, tenantOwn, human, serveShared, serveOwn] = await Promise.all([
      entityctl(shared, 'user', 'list', '--tenant', 'acme', '--json'),
      entityctl(own, 'role', 'list', '--tenant', 'acme', '--json'),
      entityctl(shared, 'user', 'list', '--tenant', 'acme'),
      entityctl(shared, 'serve', '--port', '0', '--json'),
      entityctl(own, 'serve', '--port', '0', '--json'),
    ])
    expect(server.code).toBe(1)
    expect(server.json().error).toEqual({
      code: 'DatabaseUnreachable',
      message: expect.stringMatching(new RegExp(`^Cannot reach the database at 127\\.0\\.0\\.1:1 \\(.*ECONNREFUSED.*\\)\\. Check Database:ConnectionString in ${shared}`)),
    })
    expect(tenantOwn.json().error.message).toContain(`Check Tenants:acme:ConnectionString in ${own}`)
    // serve migrates every tenant at start: the port the connection tried tells which setting.
    expect([serveShared.code, serveShared.json().error.code]).toEqual([1, 'DatabaseUnreachable'])
    expect(serveShared.json().error.message).toContain(`Check Database:ConnectionString in ${shared}`)
    expect(serveOwn.json().error.message).toContain(`Check Tenants:acme:ConnectionString in ${own}`)
    expect(human.stderr).toContain('entityctl: Cannot reach the database at 127.0.0.1:1')
  })

  it('does not take a host to listen on that does not resolve for a database that cannot be reached', { timeout: SLOW }, async () => {
    const config = writeConfig('listen-host.json', {})
    const [api, metrics] = await Promise.all([
      entityctl(config, 'serve', '--port', '0', '--host', 'nowhere.invalid', '--json'),
      run(['--config', config, 'serve', '--port', '0', '--json'], { Server__MetricsPort: '9', Server__MetricsHost: '192.0.2.1' }),
    ])
    expect([api.code, api.json().error]).toEqual([1, { code: 'Failed', message: expect.stringMatching(/^Cannot listen on nowhere\.invalid: it is not an address of this machine \((ENOTFOUND|EAI_AGAIN)\); check Server:Host \(or --host\)\.$/) }])
    expect(metrics.json().error.message).toBe('Cannot listen on 192.0.2.1: it is not an address of this machine (EADDRNOTAVAIL); check Server:MetricsHost.')
  })

  it('names the tenant and its Database setting when its database does not exist on a server that answers', { timeout: SLOW }, async () => {
    const config = writeConfig('missing-database.json', { Tenants: { gone: { Database: 'entityctl_gone_nowhere', EncryptionKey: key() } } })
    const [users, serve] = await Promise.all([entityctl(config, 'user', 'list', '--tenant', 'gone', '--json'), entityctl(config, 'serve', '--port', '0', '--json')])
    const server = new URL(TEST_DATABASE_URL)
    const message = `The database entityctl_gone_nowhere of tenant 'gone' does not exist on ${server.hostname}:${server.port || 5432}. Check Tenants:gone:Database in ${config} (or $Tenants__gone__Database), or restore the tenant from a backup.`
    expect([users.code, users.json().error]).toEqual([1, { code: 'DatabaseUnreachable', message }])
    expect([serve.code, serve.json().error]).toEqual([1, { code: 'DatabaseUnreachable', message }])
  })

  it('names the option of a database given on the command line, without its password', { timeout: SLOW }, async () => {
    const config = writeConfig('move-down.json', { Tenants: { acme: { EncryptionKey: key() } } })
    const result = await entityctl(config, 'tenant', 'move', 'acme', '--to', 'postgres://postgres:secret-pw@127.0.0.1:1/acme', '--json')
    expect([result.code, result.json().error]).toEqual([
      1,
      { code: 'DatabaseUnreachable', message: expect.stringMatching(/^Cannot reach the database at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)\. Check --to\.$/) },
    ])
    expect(result.stdout).not.toContain('secret-pw')
    // A value that is not a URL at all is not echoed either: it may hold a password too.
    const garbled = await entityctl(config, 'tenant', 'move', 'acme', '--to', 'secret-pw@db-host/acme', '--json')
    // A value that cannot be a connection string is a usage error, as --port x or --days 400 are.
    expect([garbled.code, garbled.json().error.code]).toEqual([2, 'UsageError'])
    expect(garbled.json().error.message).toContain('--to must be a PostgreSQL connection string')
    const noDatabase = await entityctl(config, 'tenant', 'move', 'acme', '--to', 'postgres://db-host:5432', '--json')
    expect([noDatabase.code, noDatabase.json().error.code]).toEqual([2, 'UsageError'])
    expect(garbled.stdout + garbled.stderr).not.toContain('secret-pw')
  })
})

describe.skipIf(!existsSync('/usr/bin/script'))('prompts on a terminal', () => {
  /** Runs the command on a pseudo-terminal (util-linux `script`), answering prompts in turn. */
  function onTerminal(args: string[], answers: { after: string; send: string }[]): Promise<{ code: number; output: string }> {
    const command = [bin, ...args].map((a) => `'${a}'`).join(' ')
    const child = spawn('script', ['-qefc', command, '/dev/null'], { env: { ...process.env, CI: '' }, stdio: ['pipe', 'pipe', 'pipe'], timeout: SLOW })
    let output = ''
    let seen = 0
    return new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        output += chunk
        const next = answers[0]
        // Each answer waits for its prompt to appear after the previous answer.
        if (next && output.indexOf(next.after, seen) !== -1) {
          seen = output.length
          answers.shift()
          child.stdin.write(next.send)
        }
      })
      child.on('error', reject)
      child.on('close', (code) => resolve({ code: code ?? -1, output }))
    })
  }

  it('asks a new password twice, again when the two differ, and exits 130 on Ctrl-C', { timeout: SLOW }, async () => {
    const config = writeConfig('prompt.json', {})
    const result = await onTerminal(['--config', config, 'user', 'add', '--tenant', 'acme', '--username', 'ada'], [
      { after: 'Password:', send: 'first-pass-1\r' },
      { after: 'The same password again:', send: 'other-pass-2\r' },
      { after: 'Password:', send: '\x03' },
    ])
    expect(result.output).toContain('The two passwords differ; again.')
    expect(result.output).toContain('entityctl: Interrupted; nothing was changed.')
    expect(result.code).toBe(130)
  })
})

describe('every command family, with the test PostgreSQL: --json results, errors and exit codes', () => {
  // The first `tenant add` creates the config file (as on a first run); the environment
  // points it at the test PostgreSQL and the fixture plugins.
  const config = join(dir, 'first-run', 'entityctl.json')
  const env = { Database__ConnectionString: TEST_DATABASE_URL, Server__PluginsDir: FIXTURE_PLUGINS, Server__LogLevel: 'silent' }
  const cli = (...args: string[]) => run(['--config', config, ...args], env)
  const ok = async (...args: string[]) => {
    const result = await cli(...args, '--json')
    expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0)
    return result.json()
  }
  const fails = async (code: number, errorCode: string, ...args: string[]) => {
    const result = await cli(...args, '--json')
    expect(result.code, `${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(code)
    expect(result.json().error.code).toBe(errorCode)
    return result.json().error.message as string
  }

  it('tenant: add creates the config file on a first run; a second add of the same name fails', { timeout: SLOW }, async () => {
    mkdirSync(join(dir, 'first-run'))
    expect(await ok('tenant', 'add', tenant)).toEqual({ tenant, database, created: true, config })
    expect(Object.keys(JSON.parse(readFileSync(config, 'utf8')).Tenants)).toEqual([tenant])
    expect(await ok('tenant', 'list')).toEqual([{ name: tenant, database, state: 'enabled' }])
    expect(await fails(1, 'Failed', 'tenant', 'add', tenant)).toBe(`Tenant '${tenant}' already exists.`)
  })

  it('user, role, responsibility and pat: a result each, and a failure each', { timeout: SLOW }, async () => {
    const [ada, bob, sales] = await Promise.all([
      ok('user', 'add', '--tenant', tenant, '--username', 'ada', '--password', 'correct-horse', '--full-access'),
      ok('user', 'add', '--tenant', tenant, '--username', 'bob', '--password', 'battery-staple'),
      ok('role', 'add', 'Sales', '--tenant', tenant),
    ])
    expect([ada.username, ada.hasFullAccess, bob.username, sales.name]).toEqual(['ada', true, 'bob', 'Sales'])
    expect(await ok('role', 'tree', '--tenant', tenant)).toEqual([{ Guid: expect.any(String), Name: 'Sales', Children: [] }])
    expect((await ok('responsibility', 'list', '--tenant', tenant)).map((r: { name: string }) => r.name)).toEqual(['ReadNotes', 'ReadRoles', 'WriteNotes'])
    const issued = await ok('pat', 'issue', '--tenant', tenant, '--user', 'ada', '--name', 'script', '--days', '7')
    expect(issued).toMatchObject({ owner: 'ada', isFullAccessFallback: true, secret: expect.stringMatching(/^ectl_pat_/) })
    expect(await ok('pat', 'list', '--tenant', tenant)).toEqual([expect.objectContaining({ name: 'script', owner: 'ada', responsibilities: [], lastUsedAt: null })])

    const messages = await Promise.all([
      fails(1, 'NotFound', 'user', 'list', '--tenant', 'nowhere'),
      fails(2, 'UsageError', 'user', 'add', '--tenant', tenant),
      fails(1, 'NotFound', 'role', 'grant', 'Sales', 'FlyPlanes', '--tenant', tenant),
      fails(1, 'NotFound', 'responsibility', 'list', '--tenant', 'nowhere'),
      fails(1, 'NotFound', 'pat', 'revoke', '00000000-0000-7000-8000-000000000000', '--tenant', tenant),
      fails(1, 'Failed', 'pat', 'issue', '--tenant', tenant, '--user', 'bob', '--name', 'x', '--days', '7', '--responsibility', 'ReadNotes'),
    ])
    expect(messages[0]).toBe(`No tenant 'nowhere'. Known tenants: ${tenant}.`)
    expect(messages[1]).toBe('Missing --username.')
    expect(messages[2]).toContain("No responsibility 'FlyPlanes'")
    expect(messages[5]).toBe(`User 'bob' does not hold responsibility 'ReadNotes' in tenant '${tenant}' (holds: none); a PAT may only use what its owner holds through roles.`)
  })

  it('tenant: one database per tenant, whatever name or setting maps to it; a shared one is never dropped', { timeout: SLOW }, async () => {
    // `cli-…` and `cli_…` both map to the database entityctl_cli_….
    const twin = tenant.replaceAll('-', '_')
    const settings = () => JSON.parse(readFileSync(config, 'utf8'))
    const key = settings().Tenants[tenant].EncryptionKey
    const keyFile = join(dir, 'twin.key')
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600 })
    expect(await fails(1, 'Failed', 'tenant', 'add', twin, '--encryption-key-file', keyFile)).toContain(`Database ${database} holds data of tenant '${tenant}'`)
    // A tenant's own connection string naming the database a new tenant would get.
    const third = `${tenant}-third`
    const file = settings()
    file.Tenants.elsewhere = { ConnectionString: databaseUrl(TEST_DATABASE_URL, `entityctl_${third.replaceAll('-', '_')}`), EncryptionKey: key }
    writeFileSync(config, JSON.stringify(file))
    expect(await fails(1, 'Failed', 'tenant', 'add', third)).toContain("holds data of tenant 'elsewhere'")
    // Two entries on one database, as written by hand (or before tenant add refused it): removing one keeps the database.
    delete file.Tenants.elsewhere
    file.Tenants[twin] = { Database: database, EncryptionKey: key }
    writeFileSync(config, JSON.stringify(file))
    expect(await ok('tenant', 'remove', twin, '--yes')).toEqual({ tenant: twin, removed: true, databaseKept: true, sharedWith: [tenant] })
    expect(await ok('user', 'list', '--tenant', tenant)).toEqual(expect.arrayContaining([expect.objectContaining({ username: 'ada' })]))
    expect(Object.keys(settings().Tenants)).toEqual([tenant])
  })

  it('migrate and tenant remove: a result each, and a failure each', { timeout: SLOW }, async () => {
    expect(await ok('migrate')).toEqual([expect.objectContaining({ tenant, statements: 0 })])
    // Without a terminal, long work says what it is doing in plain lines on stderr.
    const human = await cli('migrate')
    // A server another test file starts meanwhile may hold the cluster's migration lock: the wait is said, then the same.
    const waiting = 'entityctl: waiting for another migration job (a starting server or another migrate) to finish'
    expect(human.stderr.split('\n').filter((line) => line !== waiting)).toEqual([
      `entityctl: loading the plugins of ${FIXTURE_PLUGINS}`,
      'entityctl: connecting to the database server',
      `entityctl: migrating tenant '${tenant}'`,
      '',
    ])
    expect(await fails(1, 'NotFound', 'migrate', '--tenant', 'nowhere')).toContain("No tenant 'nowhere'")
    expect(await fails(2, 'UsageError', 'tenant', 'remove', tenant)).toContain('Pass --yes')
    // A key file for a database about to be dropped would say the data is kept: refused, nothing removed.
    const keyFile = join(dir, 'dropped.key')
    expect(await fails(2, 'UsageError', 'tenant', 'remove', tenant, '--yes', '--export-key', keyFile)).toContain('without --keep-database')
    expect(existsSync(keyFile)).toBe(false)
    expect(await ok('tenant', 'list')).toEqual([{ name: tenant, database, state: 'enabled' }])
    expect(await ok('tenant', 'remove', tenant, '--yes')).toEqual({ tenant, removed: true })
  })
})
