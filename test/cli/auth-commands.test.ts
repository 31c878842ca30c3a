// The role, responsibility, pat and user commands, run as `entityctl --config <file> …`
// in-process: their output (human and --json), exit codes and one-line reasons.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { basic, cli, eventually, FIXTURE_PLUGINS, tenantPool, tokens } from '../auth/helpers.ts'

// Each command loads the plugins and opens the tenant: on a busy machine (load 15-20 on 2
// cores) a test of several commands took more than the default 30 s.
const SLOW = 120_000
let server: TestServer
let t: string
const run = (...args: string[]) => cli(server.configPath, ...args)
const ok = async (...args: string[]) => {
  const result = await run(...args)
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0)
  return result
}

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: FIXTURE_PLUGINS, users: [ADMIN, { username: 'clerk', password: 'clerk-password-1' }] })
  t = server.tenants[0]
})
afterAll(async () => {
  await server?.stop()
})

describe('role', { timeout: SLOW }, () => {
  it('adds roles under parents and shows them as a tree and a list', async () => {
    expect((await ok('role', 'add', 'Sales', '--tenant', t, '--description', 'Everyone selling')).stdout).toBe("Role 'Sales' added.\n")
    const clerks = await ok('role', 'add', 'Clerks', '--tenant', t, '--parent', 'Sales', '--json')
    expect(clerks.json()).toMatchObject({ name: 'Clerks', parent: 'Sales', responsibilities: [], users: 0 })
    await ok('role', 'add', 'Interns', '--tenant', t, '--parent', 'Clerks')
    await ok('role', 'add', 'Managers', '--tenant', t, '--parent', 'Sales')
    expect((await ok('role', 'tree', '--tenant', t)).stdout).toBe('Sales\n├─ Clerks\n│  └─ Interns\n└─ Managers\n')
    // The shape of GET /api/roles/tree.
    const tree = (await ok('role', 'tree', '--tenant', t, '--json')).json()
    expect(Object.keys(tree[0])).toEqual(['Guid', 'Name', 'Children'])
    expect(tree[0].Children.map((c: { Name: string }) => c.Name)).toEqual(['Clerks', 'Managers'])
    const list = (await ok('role', 'list', '--tenant', t, '--json')).json()
    expect(list.map((r: { name: string; parent: string | null }) => [r.name, r.parent])).toEqual([
      ['Clerks', 'Sales'],
      ['Interns', 'Clerks'],
      ['Managers', 'Sales'],
      ['Sales', null],
    ])
  })

  it('re-parents, makes roots with --none, and refuses a cycle', async () => {
    expect((await ok('role', 'set-parent', 'Interns', 'Managers', '--tenant', t)).stdout).toBe("Role 'Interns' is now under 'Managers'.\n")
    expect((await ok('role', 'set-parent', 'Interns', '--none', '--tenant', t)).stdout).toBe("Role 'Interns' is now a root.\n")
    const cycle = await run('role', 'set-parent', 'Sales', 'Clerks', '--tenant', t)
    expect(cycle.code).toBe(1)
    expect(cycle.stderr).toBe("entityctl: Role 'Sales' cannot have 'Clerks' as its parent: the roles would form a cycle ('Sales' → 'Clerks' → 'Sales').\n")
    expect((await run('role', 'set-parent', 'Interns', '--tenant', t)).stderr).toContain('--none')
  })

  it('grants and revokes responsibilities, and refuses unknown names', async () => {
    const granted = (await ok('role', 'grant', 'Clerks', 'ReadNotes', '--tenant', t, '--json')).json()
    expect(granted.responsibilities).toEqual(['ReadNotes'])
    await ok('role', 'grant', 'Clerks', 'ReadNotes', '--tenant', t)
    // The name is trimmed (README), and the answer names what was granted, not what was typed.
    expect((await ok('role', 'grant', 'Clerks', ' ReadRoles ', '--tenant', t)).stdout).toBe("Role 'Clerks' has responsibility 'ReadRoles'.\n")
    expect((await ok('role', 'revoke', 'Clerks', ' ReadRoles', '--tenant', t)).stdout).toBe("Role 'Clerks' no longer has responsibility 'ReadRoles'.\n")
    await ok('role', 'grant', 'Clerks', 'ReadRoles', '--tenant', t)
    expect((await ok('role', 'revoke', 'Clerks', 'ReadRoles', '--tenant', t, '--json')).json().responsibilities).toEqual(['ReadNotes'])
    const unknown = await run('role', 'grant', 'Clerks', 'FlyPlanes', '--tenant', t)
    expect([unknown.code, unknown.stderr.split('\n').length]).toEqual([1, 2])
    expect(unknown.stderr).toContain("No responsibility 'FlyPlanes'")
    expect((await run('role', 'revoke', 'Clerks', 'WriteNotes', '--tenant', t)).stderr).toContain("does not have responsibility 'WriteNotes'")
    expect((await run('role', 'grant', 'Nobody', 'ReadNotes', '--tenant', t)).stderr).toContain("No role 'Nobody'")
  })

  it('removes a leaf role, but not one with children', async () => {
    await ok('role', 'add', 'Temp', '--tenant', t, '--parent', 'Interns')
    expect((await run('role', 'remove', 'Interns', '--tenant', t)).stderr).toContain('child role(s)')
    expect((await ok('role', 'remove', 'Temp', '--tenant', t, '--json')).json()).toEqual({ tenant: t, role: 'Temp', removed: true })
    await ok('role', 'remove', 'Interns', '--tenant', t)
  })

  it('refuses a role name with control characters, from the CLI and over the API, but keeps an older one editable', async () => {
    const refusal = 'A role name may not contain control characters (line breaks, tabs, escapes)'
    for (const name of ['Sales\nTeam', 'Bell\u0007', 'Red\u001b[31m']) {
      const added = await run('role', 'add', name, '--tenant', t)
      expect([added.code, added.stderr], JSON.stringify(name)).toEqual([1, `entityctl: Validation failed: Name: ${refusal}\n`])
    }
    const admin = (await tokens(server)).accessToken
    const created = await call(`${server.api}/Roles`, { method: 'POST', token: admin, body: { Name: 'Nul\u0001Role' } })
    expect([created.status, created.body.error.code, created.body.error.details]).toEqual([400, 'ValidationFailed', [expect.objectContaining({ target: 'Name', message: refusal })]])
    const sales = (await call(`${server.api}/Roles?$select=Guid&$filter=Name eq 'Sales'`, { token: admin })).body.value[0].Guid
    const renamed = await call(`${server.api}/Roles(${sales})`, { method: 'PATCH', token: admin, body: { Name: 'Sa\nles' } })
    expect([renamed.status, renamed.body.error.details[0].target]).toEqual([400, 'Name'])
    const names = (await ok('role', 'list', '--tenant', t, '--json')).json().map((r: { name: string }) => r.name)
    expect(names.filter((name: string) => /\p{Cc}/u.test(name))).toEqual([])
    // A name stored before the rule does not stop its role being described or removed.
    const pool = tenantPool(server)
    try {
      const old = (await pool.query(`insert into "Role" ("Guid", "Name", "Title") values (gen_random_uuid(), 'old\u0001role', 'old') returning "Guid"`)).rows[0].Guid
      expect((await call(`${server.api}/Roles(${old})`, { method: 'PATCH', token: admin, body: { Description: 'kept' } })).status).toBe(204)
      expect((await call(`${server.api}/Roles(${old})`, { method: 'DELETE', token: admin })).status).toBe(204)
    } finally {
      await pool.end()
    }
  })

  it('names the missing option when there is no terminal to ask, and the known tenants for an unknown one', async () => {
    const missing = await run('role', 'list')
    expect([missing.code, missing.stderr]).toEqual([2, 'entityctl: Missing --tenant.\n'])
    const unknown = await run('role', 'list', '--tenant', 'nope')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain(`No tenant 'nope'. Known tenants: ${t}`)
  })
})

describe('user', { timeout: SLOW }, () => {
  const user = (...args: string[]) => ['user', ...args, '--tenant', t, '--username', 'clerk']

  it('grants and revokes roles', async () => {
    expect((await ok(...user('grant-role', '--role', 'Clerks'))).stdout).toBe("User 'clerk' has role 'Clerks'.\n")
    const listed = (await ok('user', 'list', '--tenant', t, '--json')).json()
    expect(listed.find((u: { username: string }) => u.username === 'clerk').roles).toEqual(['Clerks'])
    expect((await run(...user('revoke-role', '--role', 'Managers'))).stderr).toContain("does not have role 'Managers'")
    await ok(...user('revoke-role', '--role', 'Clerks'))
  })

  it('turns full access on and off, and refuses other words', async () => {
    expect((await ok(...user('full-access', 'on', '--json'))).json()).toEqual({ tenant: t, username: 'clerk', hasFullAccess: true })
    await ok(...user('full-access', 'off'))
    const maybe = await run(...user('full-access', 'maybe'))
    expect([maybe.code, maybe.stderr]).toEqual([2, "entityctl: full-access takes 'on' or 'off', not 'maybe'.\n"])
  })

  it('disables and enables a user', async () => {
    expect((await ok(...user('disable'))).stdout).toBe("User 'clerk' disabled.\n")
    expect((await ok('user', 'list', '--tenant', t, '--json')).json().find((u: { username: string }) => u.username === 'clerk').disabled).toBe(true)
    await ok(...user('enable'))
    expect((await run('user', 'disable', '--tenant', t, '--username', 'ghost')).stderr).toContain("No user 'ghost'")
  })

  // A password is a value of --password: one it cannot take is a usage error (exit 2), as --days 400 is.
  it.each([
    ['a password needs at least 8 characters', 'short'],
    ['a password may have at most 1024 characters', 'x'.repeat(1025)],
  ])('refuses a --password it cannot take (%s) with exit 2, in user add and set-password', async (reason, password) => {
    const added = await run('user', 'add', '--tenant', t, '--username', 'weak', '--password', password)
    expect([added.code, added.stderr]).toEqual([2, `entityctl: --password is refused: ${reason}.\n`])
    const json = await run('user', 'add', '--tenant', t, '--username', 'weak', '--password', password, '--json')
    expect([json.code, json.json().error.code]).toEqual([2, 'UsageError'])
    const changed = await run(...user('set-password', '--password', password))
    expect([changed.code, changed.stderr]).toEqual([2, `entityctl: --password is refused: ${reason}.\n`])
    expect((await ok('user', 'list', '--tenant', t, '--json')).json().map((u: { username: string }) => u.username)).not.toContain('weak')
  })

  it('refuses a user name with control characters, from the CLI and over the API, but keeps an older one editable', async () => {
    const refusal = 'A user name may not contain control characters (line breaks, tabs, escapes)'
    for (const name of ['tab\u0001by', 'line\nbreak']) {
      const added = await run('user', 'add', '--tenant', t, '--username', name, '--password', 'control-password-1')
      expect([added.code, added.stderr], JSON.stringify(name)).toEqual([1, `entityctl: Validation failed: Username: ${refusal}\n`])
    }
    const admin = (await tokens(server)).accessToken
    const created = await call(`${server.api}/Users`, { method: 'POST', token: admin, body: { Username: 'tab\u0001by' } })
    expect([created.status, created.body.error.details]).toEqual([400, [expect.objectContaining({ code: 'ValidationFailed', target: 'Username', message: refusal })]])
    const clerk = (await call(`${server.api}/Users?$select=Guid&$filter=Username eq 'clerk'`, { token: admin })).body.value[0].Guid
    const renamed = await call(`${server.api}/Users(${clerk})`, { method: 'PATCH', token: admin, body: { Username: 'cl\nerk' } })
    expect([renamed.status, renamed.body.error.details[0].target]).toEqual([400, 'Username'])
    const names = (await ok('user', 'list', '--tenant', t, '--json')).json().map((u: { username: string }) => u.username)
    expect(names.filter((name: string) => /\p{Cc}/u.test(name))).toEqual([])
    // A name stored before the rule does not stop its user being disabled.
    const pool = tenantPool(server)
    try {
      const old = (await pool.query(`insert into "User" ("Guid", "Username", "Title", "HasFullAccess", "Disabled") values (gen_random_uuid(), 'old\u0001name', 'old', false, false) returning "Guid"`)).rows[0].Guid
      expect((await call(`${server.api}/Users(${old})`, { method: 'PATCH', token: admin, body: { Disabled: true } })).status).toBe(204)
    } finally {
      await pool.end()
    }
  })
})

describe('pat', { timeout: SLOW }, () => {
  it('issues a PAT that works over HTTP, prints its secret once, lists, regenerates and revokes it', async () => {
    await ok('role', 'grant', 'Clerks', 'ReadRoles', '--tenant', t)
    await ok('user', 'grant-role', '--tenant', t, '--username', 'clerk', '--role', 'Clerks')
    const issued = await ok('pat', 'issue', '--tenant', t, '--user', 'clerk', '--name', 'export', '--days', '10', '--responsibility', 'ReadRoles', 'ReadNotes')
    const secret = issued.stdout.trim().split('\n').at(-1)!
    expect(secret).toMatch(/^ectl_pat_/)
    expect((await call(`${server.api}/roles/tree`, { headers: basic(secret) })).status).toBe(200)
    const listed = (await ok('pat', 'list', '--tenant', t, '--user', 'clerk', '--json')).json()
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ name: 'export', status: 'active', owner: 'clerk', responsibilities: ['ReadNotes', 'ReadRoles'] })
    expect(listed[0].responsibilityIds).toHaveLength(2)
    // For people: owner, scope by name, expiry and last use.
    const table = (await ok('pat', 'list', '--tenant', t)).stdout.split('\n')
    expect(table[0].split(/\s+/)).toEqual(['id', 'name', 'owner', 'status', 'scope', 'expiresAt', 'lastUsedAt'])
    expect(table[2]).toContain('clerk')
    expect(table[2]).toContain('ReadNotes, ReadRoles')
    expect(JSON.stringify(listed)).not.toContain(secret)
    const regenerated = (await ok('pat', 'regenerate', listed[0].id, '--tenant', t, '--json')).json()
    expect(regenerated.secret).toMatch(/^ectl_pat_/)
    // The server hears of CLI changes by NOTIFY, within milliseconds.
    await eventually(async () => expect((await call(`${server.api}/roles/tree`, { headers: basic(secret) })).status).toBe(401), 1_000)
    expect((await ok('pat', 'revoke', listed[0].id, '--tenant', t)).stdout).toBe("PAT 'export' is revoked.\n")
    await eventually(async () => expect((await call(`${server.api}/roles/tree`, { headers: basic(regenerated.secret) })).status).toBe(401), 1_000)
  })

  it('refuses a PAT name with control characters, from the CLI and over the API', async () => {
    const refusal = 'name may not contain control characters (line breaks, tabs, escapes)'
    for (const name of ['ex\nport', 'nul\u0000', 'red\u001b[31m']) {
      const issued = await run('pat', 'issue', '--tenant', t, '--user', 'clerk', '--name', name, '--days', '5', '--responsibility', 'ReadNotes')
      expect([issued.code, issued.stderr], JSON.stringify(name)).toEqual([1, `entityctl: Validation failed: name: ${refusal}\n`])
    }
    const admin = await tokens(server)
    const roles = (await call(`${server.api}/Responsibilities?$select=Guid,Name`, { token: admin.accessToken })).body.value
    const created = await call(`${server.api}/user/pats`, {
      method: 'POST',
      token: admin.accessToken,
      body: { name: 'line\nbreak', expirationDays: 5, responsibilityIds: [roles[0].Guid] },
    })
    expect([created.status, created.body.error.code, created.body.error.details]).toEqual([400, 'ValidationFailed', [expect.objectContaining({ target: 'name', message: refusal })]])
    const names = (await ok('pat', 'list', '--tenant', t, '--json')).json().map((pat: { name: string }) => pat.name)
    expect(names.filter((name: string) => /\p{Cc}/u.test(name))).toEqual([])
  })

  it('applies the issuing rules: days, held responsibilities, fallback conditions', async () => {
    const base = ['pat', 'issue', '--tenant', t, '--name', 'x']
    expect((await run(...base, '--user', 'clerk', '--days', '400', '--responsibility', 'ReadRoles')).stderr).toContain('--days must be a whole number from 1 to 365')
    // The admin acts for the owner: the refusal names the owner and the responsibility typed.
    const notHeld = await run(...base, '--user', 'clerk', '--days', '5', '--responsibility', 'WriteNotes', '--json')
    expect(notHeld.code).toBe(1)
    expect(notHeld.json().error.message).toMatch(/^User 'clerk' does not hold responsibility 'WriteNotes' in tenant '[^']+' \(holds: 'ReadNotes', 'ReadRoles'\)/)
    expect(notHeld.json().error.message).not.toMatch(/\byou\b|[0-9a-f]{8}-[0-9a-f]{4}/)
    expect((await run(...base, '--user', 'clerk', '--days', '5')).stderr).toContain("full-access fallback, allowed only to a user with full access and no roles; user 'clerk' does not have full access")
    const fallback = (await ok(...base, '--user', 'admin', '--days', '5', '--json')).json()
    expect(fallback.isFullAccessFallback).toBe(true)
    expect((await run('pat', 'revoke', '00000000-0000-7000-8000-000000000000', '--tenant', t)).stderr).toContain("No PAT '00000000-0000-7000-8000-000000000000'")
  })
})

describe('names typed with control characters', { timeout: SLOW }, () => {
  // No control character but the message's own line breaks: an escape would be run by the
  // terminal, a line break or a carriage return in a name would forge lines.
  const printable = (text: string) => expect(text).not.toMatch(/[^\P{Cc}\n]/u)
  const refused = async (args: string[], expected: string) => {
    const result = await run(...args)
    expect(result.code, args.join(' ')).not.toBe(0)
    printable(result.stderr)
    expect(result.stderr.split('\n')).toHaveLength(2)
    expect(result.stderr).toContain(expected)
    const json = await run(...args, '--json')
    expect(json.json().error.message).toContain(expected)
  }

  it('are quoted with their control characters escaped in lookups that do not find them', async () => {
    await refused(['role', 'grant', 'Red\u001b[31m', 'ReadNotes', '--tenant', t], `No role "Red\\u001b[31m" in tenant '${t}'`)
    await refused(['role', 'grant', 'Clerks', 'Bell\u0007', '--tenant', t], 'No responsibility "Bell\\u0007"')
    await refused(['role', 'remove', 'C1\u009b2J', '--tenant', t], 'No role "C1\\u009b2J"')
    await refused(['user', 'disable', '--tenant', t, '--username', 'ghost\r\nentityctl: done'], 'No user "ghost\\r\\nentityctl: done"')
    await refused(['user', 'grant-role', '--tenant', t, '--username', 'clerk', '--role', 'Del\u007f'], 'No role "Del\\u007f"')
    await refused(['pat', 'list', '--tenant', t, '--user', 'x\u001b]0;title\u0007'], 'No user "x\\u001b]0;title\\u0007"')
    await refused(['pat', 'revoke', 'id\u001b[2J', '--tenant', t], 'No PAT "id\\u001b[2J"')
    await refused(['pat', 'issue', '--tenant', t, '--user', 'clerk', '--name', 'x', '--days', '5', '--responsibility', 'R\u001b[1m'], 'responsibility "R\\u001b[1m"')
    await refused(['role', 'list', '--tenant', 'acme\u001b[2J'], 'No tenant "acme\\u001b[2J". Known tenants:')
    await refused(['tenant', 'disable', 'acme\u001b[2J'], 'No tenant "acme\\u001b[2J";')
    await refused(['user', 'full-access', 'o\u001bn', '--tenant', t, '--username', 'clerk'], `full-access takes 'on' or 'off', not "o\\u001bn".`)
  })

  it('are shown escaped in the lists and the tree when stored, and as they are in --json', async () => {
    await ok('role', 'add', 'StoredParent', '--tenant', t)
    await ok('role', 'add', 'Stored', '--tenant', t, '--parent', 'StoredParent')
    await ok('role', 'grant', 'Stored', 'ReadNotes', '--tenant', t)
    await ok('user', 'add', '--tenant', t, '--username', 'stored-user', '--password', 'stored-password-1')
    await ok('user', 'grant-role', '--tenant', t, '--username', 'stored-user', '--role', 'Stored')
    await ok('user', 'grant-role', '--tenant', t, '--username', 'stored-user', '--role', 'StoredParent')
    await ok('pat', 'issue', '--tenant', t, '--user', 'stored-user', '--name', 'stored-pat', '--days', '5', '--responsibility', 'ReadNotes')
    // Names stored before the rule (or by SQL): the CLI must not hand their controls to the terminal.
    const [role, user, pat] = ['Red\u001b[31mRole', 'bell\u0007user', 'pat\r\nforged']
    const pool = tenantPool(server)
    try {
      await pool.query(`update "Role" set "Name" = $1 where "Name" = 'Stored'`, [role])
      await pool.query(`update "User" set "Username" = $1 where "Username" = 'stored-user'`, [user])
      await pool.query(`update "_Pat" set "Name" = $1 where "Name" = 'stored-pat'`, [pat])
    } finally {
      await pool.end()
    }
    const escaped = { role: '"Red\\u001b[31mRole"', user: '"bell\\u0007user"', pat: '"pat\\r\\nforged"' }
    const roles = await ok('role', 'list', '--tenant', t)
    const tree = await ok('role', 'tree', '--tenant', t)
    const users = await ok('user', 'list', '--tenant', t)
    const pats = await ok('pat', 'list', '--tenant', t)
    const responsibilities = await ok('responsibility', 'list', '--tenant', t)
    for (const [output, names] of [[roles, [escaped.role]], [tree, [`StoredParent\n└─ ${escaped.role}`]], [users, [escaped.user, escaped.role]], [pats, [escaped.pat, escaped.user]], [responsibilities, [escaped.role]]] as const) {
      printable(output.stdout)
      for (const name of names) expect(output.stdout).toContain(name)
    }
    // Each name of a list in one cell on its own: the comma between them stays a separator.
    expect([`${escaped.role}, StoredParent`, `StoredParent, ${escaped.role}`].some((cell) => users.stdout.includes(cell)), users.stdout).toBe(true)
    expect((await ok('role', 'list', '--tenant', t, '--json')).json().map((r: { name: string }) => r.name)).toContain(role)
    expect((await ok('pat', 'list', '--tenant', t, '--json')).json().map((p: { name: string }) => p.name)).toContain(pat)
  })

  it('are escaped in the usage errors of the command line itself', async () => {
    const result = await run('role', 'grnt\u001b[31m')
    expect(result.code).toBe(2)
    printable(result.stderr)
    expect(result.stderr).toContain('grnt\\u001b[31m')
  })
})

describe('a disabled tenant', { timeout: SLOW }, () => {
  it('is refused by the API but still administered: users, and responsibility sync of every tenant', async () => {
    await ok('tenant', 'disable', t)
    try {
      expect((await call(`${server.api}/auth/signin`, { method: 'POST', body: { TenantId: t, Username: ADMIN.username, Password: ADMIN.password } })).status).toBe(401)
      await ok('user', 'add', '--tenant', t, '--username', 'while-disabled', '--password', 'disabled-password-1')
      expect((await ok('user', 'list', '--tenant', t, '--json')).json().map((u: { username: string }) => u.username)).toContain('while-disabled')
      // Every tenant, the disabled one included: it used to stop at it, 'No tenant … Known tenants: <it>'.
      expect((await ok('responsibility', 'sync', '--json')).json().map((report: { tenant: string }) => report.tenant)).toEqual([t])
    } finally {
      await ok('tenant', 'enable', t)
    }
  })
})
