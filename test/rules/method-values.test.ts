// Plugin methods whose parameters and results are not plain scalars in a JSON body: entity-typed
// parameters as $metadata declares them (OData JSON 18), and dates a method returns as JS Dates.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cli, tokens } from '../auth/helpers.ts'
import { ADMIN, call, startTestServer, type TestServer } from '../support/test-server.ts'
import { WorkflowClient } from '../workflows/helpers.ts'

let server: TestServer
let token: string
const PICKER = { username: 'picker', password: 'picker-password-1' }

beforeAll(async () => {
  server = await startTestServer({ pluginsDir: fileURLToPath(new URL('./method-plugins', import.meta.url)), users: [ADMIN, PICKER] })
  token = await server.token()
})
afterAll(async () => server?.stop())

describe('results that are JS Dates', () => {
  it('answers an Edm.DateTimeOffset result as its literal', async () => {
    const response = await call(`${server.api}/Crates/Moment()`, { token })
    expect(response.status).toBe(200)
    expect(response.body.value).toBe('2024-03-01T12:00:00.000Z')
  })

  it('answers an Edm.Date result as YYYY-MM-DD', async () => {
    const response = await call(`${server.api}/Crates/Day()`, { token })
    expect(response.status).toBe(200)
    expect(response.body.value).toBe('2024-03-01')
  })
})

describe('date parameters', () => {
  it('reach the method as a given value does, defaults too: YYYY-MM-DD and an ISO date-time', async () => {
    const defaults = await call(`${server.api}/Crates/Echo()`, { token })
    expect(JSON.parse(defaults.body.value)).toEqual({ day: '2024-01-31', when: '2024-01-31T10:00:00.000Z' })
    const given = await call(`${server.api}/Crates/Echo(day=2024-02-01,when=2024-02-01T10:00:00Z)`, { token })
    expect(JSON.parse(given.body.value)).toEqual({ day: '2024-02-01', when: '2024-02-01T10:00:00.000Z' })
  })
})

describe('a null the client gives', () => {
  it('is the value of a nullable parameter, not its default', async () => {
    for (const path of ['Crates/Echo(day=null)', 'Crates/Echo?day=null', 'Crates/Echo(day=@d)']) {
      const response = await call(`${server.api}/${path}`, { token })
      expect(response.status, `${path}: ${response.text}`).toBe(200)
      expect(JSON.parse(response.body.value), path).toEqual({ day: null, when: '2024-01-31T10:00:00.000Z' })
    }
  })

  it('is refused for a non-nullable parameter, with a default or without, naming it', async () => {
    const inline = await call(`${server.api}/Crates/Times(n=null)`, { token })
    expect(inline.status, inline.text).toBe(400)
    expect(inline.body.error).toEqual({ code: 'InvalidParameter', target: 'n', message: "The parameter 'n' cannot be null." })
    for (const [body, target] of [[{ n: null, by: 1 }, 'n'], [{ by: null }, 'by']] as const) {
      const response = await call(`${server.api}/Crates/Bump`, { method: 'POST', token, body })
      expect(response.status, response.text).toBe(400)
      expect(response.body.error, JSON.stringify(body)).toEqual({ code: 'InvalidParameter', target, message: `The parameter '${target}' cannot be null.` })
    }
  })

  it('as the whole body of an action is refused: the body is an object of parameters', async () => {
    const response = await fetch(`${server.api}/Crates/Bump`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: 'null' })
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('The body of an action must be a JSON object of its parameters, as {"percent": 5}.')
  })
})

describe('double parameters', () => {
  it('take a number with a fraction or an exponent in the path, a parameter alias and the query string', async () => {
    for (const path of ['Crates/Half(x=1.5)', 'Crates/Half(x=-0.75e1)', 'Crates/Half(x=@x)?@x=1.5', 'Crates/Half?x=1.5', 'Crates/Half(x=3)']) {
      const response = await call(`${server.api}/${path}`, { token })
      expect(response.status, `${path}: ${response.text}`).toBe(200)
      expect(response.body.value).toBe(path.includes('-0.75e1') ? -3.75 : path.includes('x=3') ? 1.5 : 0.75)
    }
  })
})

describe('annotations in an action\'s body', () => {
  it('are taken on a parameter it declares, as on a property (x@odata.type), and name no other', async () => {
    const annotated = await call(`${server.api}/Crates/Twice`, { method: 'POST', token, body: { '@odata.context': '$metadata#Crates', 'x@odata.type': '#Double', x: 1.5 } })
    expect(annotated.status, annotated.text).toBe(200)
    expect(annotated.body.value).toBe(3)
    const stray = await call(`${server.api}/Crates/Twice`, { method: 'POST', token, body: { 'y@odata.type': '#Double', x: 1.5 } })
    expect(stray.status).toBe(400)
    expect(stray.body.error).toMatchObject({ code: 'InvalidParameter', target: 'y', message: expect.stringContaining("Unknown parameter 'y'") })
  })
})

describe('text parameters in the query string', () => {
  it('take null as null, as in the path, and a quoted or bare word as its text', async () => {
    const cases: [string, string][] = [
      ['Crates/Shout?word=null', 'nothing'],
      ['Crates/Shout(word=null)', 'nothing'],
      ["Crates/Shout?word='null'", 'NULL'],
      ["Crates/Shout?word='hi'", 'HI'],
      ['Crates/Shout?word=hi', 'HI'],
    ]
    for (const [path, value] of cases) {
      const response = await call(`${server.api}/${path}`, { token })
      expect(response.status, response.text).toBe(200)
      expect(response.body.value, path).toBe(value)
    }
  })
})

describe('a parameter given twice', () => {
  it('is refused naming where, rather than one of its values taken silently', async () => {
    const path = await call(`${server.api}/Crates/Shout(word='a')?word=b`, { token })
    expect(path.status, path.text).toBe(400)
    expect(path.body.error).toMatchObject({ code: 'InvalidParameter', target: 'word', message: "The parameter 'word' is given twice, in the path and in the query string; give it once." })
    const body = await call(`${server.api}/Crates/Twice?x=2`, { method: 'POST', token, body: { x: 1 } })
    expect(body.status, body.text).toBe(400)
    expect(body.body.error.message).toContain('in the body and in the query string')
  })
})

describe('the declared bounds and length of a parameter', () => {
  it('refuse a value outside them, naming the parameter, as $metadata says (Validation.Minimum, MaxLength)', async () => {
    const cases = [
      ['Crates/Lend(days=0)', "The parameter 'days' must be at least 1."],
      ['Crates/Lend(days=31)', "The parameter 'days' must be at most 30."],
      ["Crates/Lend(days=7,note='too long')", "The parameter 'note' may have at most 5 characters (has 8)."],
      ['Crates/Lend(days=7,rate=0.25)', "The parameter 'rate' must be at least 0.5."],
    ]
    for (const [path, message] of cases) {
      const response = await call(`${server.api}/${path}`, { token })
      expect(response.status, `${path}: ${response.text}`).toBe(400)
      expect(response.body.error).toMatchObject({ code: 'InvalidParameter', message })
    }
    const within = await call(`${server.api}/Crates/Lend(days=30,note='short',rate=0.5)`, { token })
    expect(within.status, within.text).toBe(200)
    expect(JSON.parse(within.body.value)).toEqual({ days: 30, note: 'short', rate: 0.5 })
  })
})

describe('doubles that are not finite', () => {
  it('are refused as parameters, INF and NaN in a URL, 1e400 in a body: no answer could write them back', async () => {
    for (const path of ['Crates/Half(x=INF)', 'Crates/Half(x=-INF)', 'Crates/Half(x=NaN)', 'Crates/Half?x=INF']) {
      const response = await call(`${server.api}/${path}`, { token })
      expect(response.status, `${path}: ${response.text}`).toBe(400)
      expect(response.body.error).toMatchObject({ code: 'InvalidParameter', target: 'x', message: expect.stringContaining('expects a finite number') })
    }
    const body = await fetch(`${server.api}/Crates/Twice`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{"x":1e400}' })
    expect(body.status).toBe(400)
    expect(((await body.json()) as { error: { message: string } }).error.message).toBe("The parameter 'x' expects a finite number, not a number out of range (beyond ±1.8e308).")
  })

  it('are the plugin\'s fault as a result (500 PluginFailed), never answered as null', async () => {
    const response = await call(`${server.api}/Crates/Twice`, { method: 'POST', token, body: { x: 1e308 } })
    expect(response.status, response.text).toBe(500)
    expect(response.body.error).toMatchObject({ code: 'PluginFailed', message: expect.stringContaining('Crate.Twice') })
  })
})

describe('context URLs of values', () => {
  it('name the enumeration type $metadata declares as the result', async () => {
    const response = await call(`${server.api}/Crates/Verdict()`, { token })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ '@odata.context': `${server.api}/$metadata#entityctl.CrateVerdictResult`, value: 'Yes' })
    const metadata = await call(`${server.api}/$metadata`, { token })
    expect(metadata.text).toContain('<ReturnType Type="entityctl.CrateVerdictResult"')
  })

  it('name the Edm type of a primitive result', async () => {
    expect((await call(`${server.api}/Crates/Times()`, { token })).body).toEqual({ '@odata.context': `${server.api}/$metadata#Edm.Int32`, value: 7 })
  })
})

describe('entity-typed parameters, as $metadata declares them (OData JSON 18)', () => {
  let items: string[]
  let crate: string
  const pick = (body: unknown) => call(`${server.api}/Crates/Pick`, { method: 'POST', token, body })

  beforeAll(async () => {
    items = []
    for (const Name of ['one', 'two']) items.push((await call(`${server.api}/Items`, { method: 'POST', token, body: { Name } })).body.Guid)
    crate = (await call(`${server.api}/Crates`, { method: 'POST', token, body: { Code: 'C1' } })).body.Guid
  })

  it('takes an entity with its key, a reference, an @odata.bind (4.01: @bind) or the bare Guid, and gives the method the Guid', async () => {
    const [one, two] = items
    for (const body of [
      { target: { Guid: one }, many: [{ Guid: two }] },
      { target: { '@odata.id': `Items(${one})` }, many: [{ '@odata.id': `${server.api}/Items(${two})` }] },
      { 'target@odata.bind': `Items(${one})`, 'many@odata.bind': [`Items(${two})`] },
      // 4.01 writes control information without the odata. prefix (JSON 4.01 §4.5).
      { 'target@bind': `Items(${one})`, 'many@bind': [`Items(${two})`] },
      { target: one, many: [two] },
    ]) {
      const response = await pick(body)
      expect(response.status, JSON.stringify(body)).toBe(200)
      expect(JSON.parse(response.body.value), JSON.stringify(body)).toEqual({ target: one, many: [two] })
    }
  })

  it('refuses what names no entity of the parameter type, naming the parameter', async () => {
    for (const body of [
      { target: { Name: 'one' } },
      { target: { '@odata.id': `Crates(${items[0]})` } },
      { target: 'not a key' },
      { target: { Guid: items[0] }, many: { Guid: items[1] } },
      { target: { Guid: items[0] }, 'target@odata.bind': `Items(${items[0]})` },
    ]) {
      const response = await pick(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body.error.code, JSON.stringify(body)).toBe('InvalidParameter')
    }
    const missing = await pick({ many: [] })
    expect(missing.body.error).toMatchObject({ code: 'MissingParameter', target: 'target' })
  })

  it('refuses a Guid of no entity, naming the parameter, before the method runs', async () => {
    const nobody = '0190c000-0000-7000-8000-000000000001'
    for (const [body, target] of [
      [{ target: nobody }, 'target'],
      [{ target: { '@odata.id': `Items(${nobody})` } }, 'target'],
      [{ target: items[0], many: [items[1], nobody] }, 'many'],
      // An entity of another type is no Item, though it exists.
      [{ target: items[0], many: [crate] }, 'many'],
    ] as const) {
      const response = await pick(body)
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(400)
      expect(response.body.error, JSON.stringify(body)).toEqual({ code: 'InvalidParameter', target, message: `The parameter '${target}' names no Item with the Guid ${target === 'target' ? nobody : body.many?.at(-1)}.` })
    }
    const seen = await call(`${server.api}/Crates/Seen(target=${nobody})`, { token })
    expect(seen.status, seen.text).toBe(400)
    expect(seen.body.error).toMatchObject({ code: 'InvalidParameter', target: 'target' })
  })

  it('needs read on the entity type a parameter names, decided before whether the entity exists', async () => {
    const t = server.tenants[0]
    const run = async (...args: string[]) => expect((await cli(server.configPath, ...args, '--tenant', t)).code, args.join(' ')).toBe(0)
    await run('role', 'add', 'Pickers')
    await run('role', 'grant', 'Pickers', 'PickItems')
    await run('user', 'grant-role', '--username', PICKER.username, '--role', 'Pickers')
    const picker = (await tokens(server, PICKER.username, PICKER.password)).accessToken
    const nobody = '0190c000-0000-7000-8000-000000000001'
    const asPicker = (body: unknown) => call(`${server.api}/Crates/Pick`, { method: 'POST', token: picker, body })
    // An item that exists and one that does not get the same answer: nothing is revealed.
    for (const [body, parameter] of [[{ target: items[0] }, 'target'], [{ target: nobody }, 'target'], [{ target: items[0], many: [nobody] }, 'target']] as const) {
      const response = await asPicker(body)
      expect(response.status, `${JSON.stringify(body)}: ${response.text}`).toBe(403)
      expect(response.body.error.message).toBe(`Naming Items in the parameter '${parameter}' of Crates/Pick needs the read permission on Item, which your responsibilities do not grant.`)
    }
    for (const url of [`Crates/Seen(target=${items[0]})`, `Crates/Seen(target=${nobody})`]) {
      const response = await call(`${server.api}/${url}`, { token: picker })
      expect(response.status, `${url}: ${response.text}`).toBe(403)
    }
    // A parameter left null names nothing, and needs nothing.
    expect((await call(`${server.api}/Crates/Seen(target=null)`, { token: picker })).status).toBe(200)
    await run('role', 'grant', 'Pickers', 'ReadItems')
    const allowed = (await tokens(server, PICKER.username, PICKER.password)).accessToken
    const picked = await call(`${server.api}/Crates/Pick`, { method: 'POST', token: allowed, body: { target: items[0], many: [items[1]] } })
    expect(picked.status, picked.text).toBe(200)
    const missing = await call(`${server.api}/Crates/Pick`, { method: 'POST', token: allowed, body: { target: nobody } })
    expect(missing.body.error).toMatchObject({ code: 'InvalidParameter', target: 'target' })
  })

  it("needs read on a parameter's entity type again at a workflow's commit: 403 once it is taken away, and the workflow stays open", async () => {
    const t = server.tenants[0]
    const run = async (...args: string[]) => expect((await cli(server.configPath, ...args, '--tenant', t)).code, args.join(' ')).toBe(0)
    await run('role', 'add', 'Committers')
    await run('role', 'grant', 'Committers', 'PickItems')
    await run('role', 'add', 'ItemReaders')
    await run('role', 'grant', 'ItemReaders', 'ReadItems')
    const committer = { username: 'committer', password: 'committer-password-1' }
    await run('user', 'add', '--username', committer.username, '--password', committer.password)
    await run('user', 'grant-role', '--username', committer.username, '--role', 'Committers')
    await run('user', 'grant-role', '--username', committer.username, '--role', 'ItemReaders')
    const workflow = await WorkflowClient.start(server.api, (await tokens(server, committer.username, committer.password)).accessToken)
    try {
      const picked = await workflow.send('POST', 'Crates/Pick', { target: items[0] })
      expect(picked.status, picked.text).toBe(200)
      await run('user', 'revoke-role', '--username', committer.username, '--role', 'ItemReaders')
      const commit = await workflow.commit()
      expect(commit.status, commit.text).toBe(403)
      expect(commit.body.error.message).toContain("Naming Items in the parameter 'target' of Crates/Pick needs the read permission on Item, which your responsibilities do not grant.")
      // Open still: its next request is served.
      expect((await workflow.send('GET', 'Crates/Seen(target=null)')).status).toBe(200)
    } finally {
      expect((await workflow.abort()).status).toBe(200)
    }
  })

  it('takes an entity a workflow created before, which exists for the workflow only', async () => {
    const workflow = await WorkflowClient.start(server.api, token)
    const created = (await workflow.send('POST', 'Items', { Name: 'pending' })).body.Guid
    const picked = await workflow.send('POST', 'Crates/Pick', { target: created })
    expect(picked.status, picked.text).toBe(200)
    expect((await pick({ target: created })).body.error).toMatchObject({ code: 'InvalidParameter', target: 'target' })
    expect((await workflow.abort()).status).toBe(200)
  })

  it("takes a function's entity parameter as a Guid, or as JSON in the query string or an alias", async () => {
    const [one] = items
    for (const url of [
      `Crates/Seen(target=${one})`,
      `Crates/Seen?target=${encodeURIComponent(JSON.stringify({ Guid: one }))}`,
      `Crates/Seen?target=${encodeURIComponent(JSON.stringify({ '@odata.id': `Items(${one})` }))}`,
    ]) {
      const response = await call(`${server.api}/${url}`, { token })
      expect(response.status, `${url}: ${response.text}`).toBe(200)
      expect(response.body.value, url).toBe(one)
    }
  })

  it('refuses an entity as JSON in a parameter alias, saying so', async () => {
    const response = await call(`${server.api}/Crates/Seen(target=@t)?@t=${encodeURIComponent(JSON.stringify({ Guid: items[0] }))}`, { token })
    expect(response.body.error).toMatchObject({ code: 'NotImplemented', target: '@t' })
    expect(response.body.error.message).toContain('a JSON array or object literal is not supported')
  })
})
