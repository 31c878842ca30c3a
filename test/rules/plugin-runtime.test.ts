// Plugin code at run time: a rule or method that never settles is given up after
// ApiOptions:PluginTimeoutSeconds (or when its client goes), its connection given back and its
// work undone, and a shutdown does not wait for it beyond Server:ShutdownTimeoutSeconds; one
// that never returns (an endless loop) ends the process, which names where it was stuck.

import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, startTestServer, type TestServer } from '../support/test-server.ts'
import { serveProcess } from '../support/serve-process.ts'
import { freePort } from '../support/free-port.ts'

const PLUGINS = fileURLToPath(new URL('./plugins', import.meta.url))
const POOL_SIZE = 2

let server: TestServer
let token: string
let api: string
let dept: { Guid: string }

beforeAll(async () => {
  server = await startTestServer({
    pluginsDir: PLUGINS,
    config: { ApiOptions: { PluginTimeoutSeconds: 1 }, Database: { PoolSizePerTenant: POOL_SIZE, AcquireTimeoutSeconds: 2 } },
  })
  token = await server.token()
  api = server.api
  dept = (await call(`${api}/Depts`, { method: 'POST', token, body: { Name: 'Research', Code: 'R' } })).body
})
afterAll(async () => server?.stop())

describe('plugin code that never settles', () => {
  it('fails a method after PluginTimeoutSeconds with 500 naming it, and gives its connection back', async () => {
    // More calls than the tenant has connections: each must give its own back.
    const answers = await Promise.all(Array.from({ length: POOL_SIZE + 1 }, () => call(`${api}/Depts(${dept.Guid})/Hangs()`, { token })))
    for (const answer of answers) {
      expect(answer.status).toBe(500)
      expect(answer.body.error).toMatchObject({ code: 'PluginFailed', message: expect.stringContaining('method Dept.Hangs did not finish within ApiOptions:PluginTimeoutSeconds (1 s)') })
    }
    expect((await call(`${api}/Depts(${dept.Guid})?$select=Name`, { token })).status).toBe(200)
  })

  it('fails a validation after PluginTimeoutSeconds and saves nothing', async () => {
    const answer = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Stuck', Note: 'hang' } })
    expect(answer.status).toBe(500)
    expect(answer.body.error).toMatchObject({ code: 'PluginFailed', message: expect.stringContaining('validation Employee.Note') })
    expect((await call(`${api}/Employees?$filter=Name eq 'Stuck'`, { token })).body.value).toEqual([])
  })
})

describe('entityctl serve with plugin code that never settles and no PluginTimeoutSeconds', () => {
  it('gives the connection back when the client goes, and stops after ShutdownTimeoutSeconds', async () => {
    const metricsPort = await freePort()
    const served = await serveProcess(server.configPath, {
      ApiOptions__PluginTimeoutSeconds: '0',
      Server__ShutdownTimeoutSeconds: '1',
      Server__MetricsPort: String(metricsPort),
      Database__PoolSizePerTenant: String(POOL_SIZE),
      Database__AcquireTimeoutSeconds: '2',
    })
    /** Until the tenant's pool has `n` connections checked out (the hanging calls hold them). */
    const untilInUse = async (n: number) => {
      const inUse = new RegExp(`^entityctl_pool_connections_in_use\\{tenant="${server.tenants[0]}"\\} ${n}$`, 'm')
      while (!inUse.test(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    try {
      const bearer = token
      const hangs = `${served.api}/Depts(${dept.Guid})/Hangs()`
      const leaving = Array.from({ length: POOL_SIZE }, () => new AbortController())
      const calls = leaving.map((client) => fetch(hangs, { headers: { Authorization: `Bearer ${bearer}` }, signal: client.signal }).catch(() => undefined))
      await untilInUse(POOL_SIZE)
      for (const client of leaving) client.abort()
      await Promise.all(calls)
      expect((await call(`${served.api}/Depts(${dept.Guid})?$select=Name`, { token: bearer })).status).toBe(200)

      void fetch(hangs, { headers: { Authorization: `Bearer ${bearer}` } }).catch(() => undefined)
      await untilInUse(1)
      const signalled = Date.now()
      served.process.kill('SIGTERM')
      expect(await served.exited).toBe(0)
      expect(Date.now() - signalled).toBeLessThan(8000)
      expect(served.lines).toContainEqual(expect.objectContaining({ level: 40, connections: expect.any(Number), msg: expect.stringContaining('were abandoned') }))
    } finally {
      served.process.kill('SIGKILL')
    }
  })
})

describe('entityctl serve with plugin code that never returns', () => {
  it('stops it after PluginTimeoutSeconds, logs where it was and exits 1, having saved nothing', async () => {
    const served = await serveProcess(server.configPath, { ApiOptions__PluginTimeoutSeconds: '1' })
    try {
      const stuck = call(`${served.api}/Employees`, { method: 'POST', token, body: { Name: 'Spinner', Note: 'endless' } }).catch((error: Error) => error)
      expect(await served.exited).toBe(1)
      expect(await stuck).toBeInstanceOf(Error)
      const fatal = served.lines.find((line) => line.level === 60)
      expect(fatal).toMatchObject({ msg: expect.stringMatching(/^the event loop was blocked for \d+\.\d s \(over ApiOptions:PluginTimeoutSeconds\), at endless \(file:.*\/staff\.ts:\d+:\d+\): exiting$/) })
      expect((fatal!.stack as string[]).some((frame) => frame.startsWith('value ('))).toBe(true)
      expect((await call(`${api}/Employees?$filter=Name eq 'Spinner'`, { token })).body.value).toEqual([])
    } finally {
      served.process.kill('SIGKILL')
    }
  })

  it('kills itself when the wait is outside JavaScript, saying so on stderr', async () => {
    const served = await serveProcess(server.configPath, { ApiOptions__PluginTimeoutSeconds: '1' })
    try {
      void call(`${served.api}/Depts(${dept.Guid})/Sleeps()`, { token }).catch(() => undefined)
      expect(await served.exited).toBeNull()
      expect(served.process.signalCode).toBe('SIGKILL')
      expect(JSON.parse(served.stderr().trim().split('\n').at(-1)!)).toMatchObject({ level: 60, msg: 'the event loop stayed blocked and could not be freed: killing the process' })
    } finally {
      served.process.kill('SIGKILL')
    }
  })
})

describe('plugin code that throws', () => {
  const threw = (what: string, error: string) => ({ code: 'PluginFailed', message: `The plugin's ${what} failed: ${error}.` })
  const typeError = "TypeError: Cannot read properties of undefined (reading 'level')"

  it('is a 500 naming the rule or method and what it threw, and saves nothing', async () => {
    const computed = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Ike', Note: 'score bug' } })
    expect([computed.status, computed.body.error]).toEqual([500, threw('computed Employee.Score', typeError)])
    const validation = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Ike', Note: 'refused' } })
    expect([validation.status, validation.body.error]).toEqual([500, threw('validation Employee.Note', 'Error: notes are checked by hand this week')])
    expect((await call(`${api}/Employees?$filter=Name eq 'Ike'`, { token })).body.value).toEqual([])
    const method = await call(`${api}/Depts(${dept.Guid})/Fails()`, { token })
    expect([method.status, method.body.error]).toEqual([500, threw('method Dept.Fails', typeError)])
  })

  it('is a 500 naming a virtual rule when a read computes it', async () => {
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Ivy' } })).body
    // A PATCH answers 204: no reply computes the badge, so the write stands.
    expect((await call(`${api}/Employees(${employee.Guid})`, { method: 'PATCH', token, body: { Note: 'badge bug' } })).status).toBe(204)
    const answer = await call(`${api}/Employees(${employee.Guid})?$select=Name,Badge`, { token })
    expect([answer.status, answer.body.error]).toEqual([500, threw('computed Employee.Badge', typeError)])
  })
})

describe('what the log says of plugin code that throws', () => {
  it('logs an error with what it threw and where (the stack), alone and as a $batch request', async () => {
    const served = await serveProcess(server.configPath)
    try {
      const signedIn = (await call(`${served.api}/auth/signin`, { method: 'POST', body: { TenantId: server.tenants[0], Username: 'admin', Password: 'admin-password-1' } })).body.accessToken
      const alone = await call(`${served.api}/Employees`, { method: 'POST', token: signedIn, body: { Name: 'Ike', Note: 'score bug' }, headers: { 'X-Request-Id': 'plugin-alone' } })
      expect(alone.status).toBe(500)
      const line = await served.line((entry) => entry.requestId === 'plugin-alone' && entry.msg !== 'request')
      expect(line).toMatchObject({ level: 50, code: 'PluginFailed', msg: 'request failed', err: { type: 'TypeError', stack: expect.stringMatching(/staff\.ts:\d+:\d+/) } })

      const body = { requests: [{ id: 'p1', method: 'POST', url: 'Employees', body: { Name: 'Ike', Note: 'score bug' } }] }
      const batch = await call(`${served.api}/$batch`, { method: 'POST', token: signedIn, body, headers: { 'X-Request-Id': 'plugin-batch' } })
      expect(batch.body.responses[0]).toMatchObject({ id: 'p1', status: 500 })
      const part = await served.line((entry) => entry.requestId === 'plugin-batch' && entry.part === 'p1')
      expect(part).toMatchObject({ level: 50, code: 'PluginFailed', msg: 'request failed', err: { type: 'TypeError', stack: expect.stringMatching(/staff\.ts:\d+:\d+/) } })
    } finally {
      await served.stop()
    }
  })
})

describe('a wrong value from plugin code', () => {
  const failure = (what: string, problem: string) => ({ code: 'PluginFailed', message: expect.stringMatching(new RegExp(`^The plugin's ${what} .*${problem}`)) })

  it('is a 500 naming the method when a result is not of its declared type', async () => {
    const number = await call(`${api}/Depts(${dept.Guid})/WrongNumber()`, { token })
    expect(number.status).toBe(500)
    expect(number.body.error).toMatchObject(failure('method Dept.WrongNumber', 'expects an integer'))
    await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Eve', DeptGuid: dept.Guid } })
    const entity = await call(`${api}/Depts(${dept.Guid})/WrongEntity()`, { token })
    expect(entity.status).toBe(500)
    expect(entity.body.error).toMatchObject(failure('method Dept.WrongEntity', "returned an entity of Employee, but declares returns: p.reference\\('Dept'\\)"))
    // A long value is shortened where a JSON member ends, marked with an ellipsis, not cut mid-word.
    const list = await call(`${api}/Depts(${dept.Guid})/WrongList()`, { token })
    expect(list.status).toBe(500)
    expect(list.body.error.message).toContain(`returned {"Name":"Research and development","Code":"RND",…, but declares returns: p.many('Dept')`)
  })

  it('is a 500 naming the computed rule, not a 400 blaming the client', async () => {
    for (const [note, problem] of [['bad score', 'not "abc"'], ['huge score', 'not 1000000000000']]) {
      const answer = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Fay', Note: note } })
      expect(answer.status).toBe(500)
      expect(answer.body.error).toMatchObject(failure('computed Employee.Score', `Employee.Score, which expects an integer \\(32-bit\\), ${problem}`))
    }
    expect((await call(`${api}/Employees?$filter=Name eq 'Fay'`, { token })).body.value).toEqual([])
  })

  it('is a 500 naming a virtual computed rule, not a wrong answer', async () => {
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Hal', Note: 'bad badge' } })).body
    const answer = await call(`${api}/Employees(${employee.Guid})?$select=Badge`, { token })
    expect(answer.status).toBe(500)
    expect(answer.body.error).toMatchObject(failure('computed Employee.Badge', 'expects an integer \\(32-bit\\), not "B-1"'))
  })

  it('is a 500 naming a virtual computed rule that is async, saying it must answer at once', async () => {
    // Its find would be refused, but inside an async rule that refusal is only a rejected
    // promise; the promise itself is what the rule gave, and what is named.
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Ida', Note: 'badge lookup' } })).body
    const answer = await call(`${api}/Employees(${employee.Guid})?$select=Badge`, { token })
    expect(answer.status).toBe(500)
    expect(answer.body.error).toMatchObject(failure('computed Employee.Badge', 'returned a promise'))
  })

  it('is a 500 naming a validation or correction that returned nothing, not a 400 blaming the client', async () => {
    const validation = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'no verdict' } })
    expect([validation.status, validation.body.error]).toEqual([500, failure('validation Employee.Name', 'returned undefined; a validation returns true or a message')])
    const correction = await call(`${api}/Depts`, { method: 'POST', token, body: { Name: 'Sales', Code: 'no return' } })
    expect([correction.status, correction.body.error]).toEqual([500, failure('correction Dept.Code', 'returned undefined; a correction returns the corrected value')])
    expect((await call(`${api}/Depts?$filter=Name eq 'Sales'`, { token })).body.value).toEqual([])
  })

  it('is a 500 naming the method and the reference when a method sets a Guid no entity has, and saves nothing', async () => {
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Kim', DeptGuid: dept.Guid } })).body
    const answer = await call(`${api}/Employees(${employee.Guid})/Misplace`, { method: 'POST', token, body: {} })
    expect(answer.status, answer.text).toBe(500)
    expect(answer.body.error).toEqual({
      code: 'PluginFailed',
      message: "The plugin's method Employee.Misplace set Employee.Dept to 0190c000-0000-7000-8000-00000000dead, the Guid of no Dept.",
    })
    expect((await call(`${api}/Employees(${employee.Guid})?$select=DeptGuid`, { token })).body.DeptGuid).toBe(dept.Guid)
  })

  it('is a 500 naming the rule when a default sets a reference to a Guid no entity has, not a 400 blaming the client', async () => {
    const answer = await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Mo', Note: 'lost dept' } })
    expect(answer.status, answer.text).toBe(500)
    expect(answer.body.error).toEqual({
      code: 'PluginFailed',
      message: "The plugin's default Employee.Dept set Employee.Dept to 0190c000-0000-7000-8000-00000000dead, the Guid of no Dept.",
    })
    expect((await call(`${api}/Employees?$filter=Name eq 'Mo'`, { token })).body.value).toEqual([])
  })

  it('is the client\'s 400, naming its parameter, when the Guid no entity has is one the client gave', async () => {
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Lou' } })).body
    const nobody = '0190c000-0000-7000-8000-00000000beef'
    const answer = await call(`${api}/Employees(${employee.Guid})/MoveTo`, { method: 'POST', token, body: { dept: nobody } })
    expect(answer.status, answer.text).toBe(400)
    expect(answer.body.error).toEqual({ code: 'InvalidParameter', target: 'dept', message: `The parameter 'dept' names no Dept with the Guid ${nobody}.` })
    const bound = await call(`${api}/Employees(${employee.Guid})`, { method: 'PATCH', token, body: { 'Dept@odata.bind': `Depts(${nobody})` } })
    expect(bound.status, bound.text).toBe(400)
    expect(bound.body.error).toMatchObject({ details: [{ code: 'ValidationFailed', target: 'Dept', message: `No Dept has the Guid ${nobody}.` }] })
  })

  it('lets a method set a reference to a Guid, as the guide gives references', async () => {
    const employee = (await call(`${api}/Employees`, { method: 'POST', token, body: { Name: 'Gus' } })).body
    expect((await call(`${api}/Employees(${employee.Guid})/MoveTo`, { method: 'POST', token, body: { dept: dept.Guid } })).status).toBe(204)
    expect((await call(`${api}/Employees(${employee.Guid})?$select=DeptGuid,DeptName`, { token })).body).toMatchObject({ DeptGuid: dept.Guid, DeptName: 'Research' })
  })
})
