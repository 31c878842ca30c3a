// What the log shows of a request's URL (README "Configuration reference", Server:LogQueryValues):
// by default the values a client sent in its query and path (a $filter's literals, $search
// terms, parameter aliases, a function's parameters) are replaced by `?`, on the request line
// and on the line saying why it was refused; with Server:LogQueryValues true, the URL as sent.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loggedMessage, loggedUrl } from '../../server/http/logged-url.ts'
import { startServer, type RunningServer } from '../../server/start.ts'
import { startTestServer, type TestServer } from '../support/test-server.ts'

describe('loggedUrl', () => {
  it.each([
    ["/api/Customers?$filter=Email%20eq%20%27ada%40example.com%27%20and%20CreditLimit%20gt%201500&$top=5&$select=Name", '/api/Customers?$filter=Email%20eq%20?%20and%20CreditLimit%20gt%20?&$top=5&$select=Name'],
    ["/api/Customers?$filter=Name eq 'O''Neil' or Guid eq 3f2504e0-4f89-11d3-9a0c-0305e82c3301", '/api/Customers?$filter=Name%20eq%20?%20or%20Guid%20eq%20?'],
    ["/api/Orders?$filter=OrderDate ge 2024-01-31T10:00:00+02:00 and Status eq null&$orderby=Total desc", '/api/Orders?$filter=OrderDate%20ge%20?%20and%20Status%20eq%20null&$orderby=Total%20desc'],
    ["/api/Orders?$filter=Length gt duration'P1D' and Color eq Sales.Color'Red'", '/api/Orders?$filter=Length%20gt%20?%20and%20Color%20eq%20?'],
    ['/api/Customers?$search=ada OR "love lace" AND NOT (grace)', '/api/Customers?$search=?%20OR%20?%20AND%20NOT%20(?)'],
    ["/api/Customers?$expand=Orders($filter=Status eq 'Open';$search=ada;$top=2)", '/api/Customers?$expand=Orders($filter=Status%20eq%20?;$search=?;$top=?)'],
    ["/api/Orders?$apply=search(ada lovelace)/filter(Total gt 5)", '/api/Orders?$apply=search(?%20?)/filter(Total%20gt%20?)'],
    ["/api/Orders/OpenSince(before=@b)?@b=2024-06-01&$count=true", '/api/Orders/OpenSince(before=@b)?@b=?&$count=true'],
    ['/api/Orders/OpenSince?before=2024-06-01&$skiptoken=500', '/api/Orders/OpenSince?before=?&$skiptoken=500'],
    ['/api/Orders/OpenSince(before=2024-12-31)/$count', '/api/Orders/OpenSince(before=?)/$count'],
    ["/api/Customers('ada%40example.com')/Orders(42)", '/api/Customers(?)/Orders(42)'],
    ["/api/Customers(Name='Ada',City='x')", '/api/Customers(Name=?,City=?)'],
    ["/api/Customers?$filter=Name eq 'unterminated and more", '/api/Customers?$filter=Name%20eq%20?'],
    ['/api/Customers?$filter=Name%20eq%20%27%FF%27', '/api/Customers?$filter=Name%20eq%20?'],
    ['/api/Customers?flag&$format=json', '/api/Customers?flag&$format=json'],
    ['/api/Customers?$top=ada%40example.com&$select=%27Ada%27', '/api/Customers?$top=?&$select=?'],
  ])('%s → %s', (url, logged) => {
    expect(loggedUrl(url)).toBe(logged)
  })
})

describe('loggedMessage', () => {
  it('shows the text a syntax error quotes as the URL is shown, and replaces the values it names', () => {
    const url = "/api/Customers?$filter=Name%20eq%20%27Ada%20Lovelace%27%20%27Grace%20Hopper%27"
    const message = "Invalid $filter: end of input expected, found ''Grace Hopper'' at position 27 in 'Name eq 'Ada Lovelace' 'Grace Hopper''."
    expect(loggedMessage(message, url)).toBe("Invalid $filter: end of input expected, found '?' at position 27 in 'Name eq ? ?'.")
  })

  it('shows a window of a long text around the position, a literal cut by the window included', () => {
    const filter = `Name eq '${'x'.repeat(100)}secret${'y'.repeat(100)}' and`
    const url = `/api/Customers?$filter=${encodeURIComponent(filter)}`
    const message = `Invalid $filter: an operand expected, found end of input at position ${filter.length} in '…${filter.slice(filter.length - 60)}'.`
    const logged = loggedMessage(message, url)
    expect(logged).toBe(`Invalid $filter: an operand expected, found end of input at position ${filter.length} in '…? and'.`)
  })

  it('replaces a value named elsewhere in a message, a long one also as a token is named, cut at 40 characters', () => {
    const url = `/api/Orders?$filter=Status eq 'Ada Lovelace'&@p='${'z'.repeat(60)}'`
    expect(loggedMessage("In $filter, 'Ada Lovelace' is not a value of Orders.Status.", url)).toBe('In $filter, ? is not a value of Orders.Status.')
    expect(loggedMessage(`Invalid @p: found '${'z'.repeat(39)}…'`, url)).toBe("Invalid @p: found ?…'")
  })

  it('leaves a message alone when the URL holds no values', () => {
    expect(loggedMessage("Customers has no property 'Nmae'; did you mean 'Name'?", '/api/Customers?$select=Nmae')).toBe("Customers has no property 'Nmae'; did you mean 'Name'?")
  })
})

describe('the log of a running server', () => {
  let setup: TestServer
  const folder = mkdtempSync(join(tmpdir(), 'logged-url-'))
  const started: { server: RunningServer; lines: Record<string, unknown>[] }[] = []
  let token: string

  /** A server on the test server's configuration, `Server:LogQueryValues` as given, whose log lines are kept. */
  async function serverLogging(logQueryValues: boolean) {
    const file = JSON.parse(readFileSync(setup.configPath, 'utf8'))
    const configPath = join(folder, `entityctl-${logQueryValues}.json`)
    writeFileSync(configPath, JSON.stringify({ ...file, Server: { ...file.Server, LogQueryValues: logQueryValues } }))
    const lines: Record<string, unknown>[] = []
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) })
    const server = await startServer({ configPath, port: 0, logger })
    started.push({ server, lines })
    return { api: `${server.url}/api`, lines }
  }

  beforeAll(async () => {
    setup = await startTestServer()
    token = await setup.token()
  })
  afterAll(async () => {
    for (const { server } of started) await server.stop()
    await setup?.stop()
    rmSync(folder, { recursive: true, force: true })
  })

  const sent = [
    ["Customers?$filter=Email eq 'ada@example.com' and CreditLimit gt 1500&$top=5", 200],
    ['Customers?$search=ada OR "Lovelace"', 200],
    ['Orders/OpenSince(before=@b)?@b=1815-12-10', 200],
    ["Customers?$filter=Name eq 'Ada Lovelace' 'Grace Hopper'", 400],
  ] as const

  async function send(api: string, prefix: string): Promise<void> {
    for (const [index, [path, status]] of sent.entries()) {
      const response = await fetch(`${api}/${path}`, { headers: { Authorization: `Bearer ${token}`, 'X-Request-Id': `${prefix}-${index}` } })
      expect(response.status, path).toBe(status)
      await response.arrayBuffer()
    }
  }

  it('shows no value of a query, on the request line or the line saying why it was refused, by default', async () => {
    const { api, lines } = await serverLogging(false)
    await send(api, 'hidden')
    const said = JSON.stringify(lines.filter((line) => String(line.requestId).startsWith('hidden-')))
    for (const value of ['ada@example.com', '1500', 'Lovelace', '1815', 'Ada', 'Grace']) expect(said, value).not.toContain(value)
    const requestLine = (index: number) => lines.find((line) => line.requestId === `hidden-${index}` && line.msg === 'request')
    expect(requestLine(0)?.url).toBe('/api/Customers?$filter=Email%20eq%20?%20and%20CreditLimit%20gt%20?&$top=5')
    expect(requestLine(1)?.url).toBe('/api/Customers?$search=?%20OR%20?')
    expect(requestLine(2)?.url).toBe('/api/Orders/OpenSince(before=@b)?@b=?')
    const refused = lines.find((line) => line.requestId === 'hidden-3' && line.msg === 'request refused')
    expect(refused).toMatchObject({ status: 400, code: 'InvalidQuery', message: expect.stringMatching(/^Invalid \$filter: .* in 'Name eq \? \?'\.$/) })
  })

  it("shows no value of a $batch request's URL on the line of the error that failed the batch", async () => {
    const { api, lines } = await serverLogging(false)
    // In a workflow, a failing atomicity group fails the whole batch: the error boundary logs its error.
    const workflow = await fetch(`${api}/workflow`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } })
    const { workflowId } = (await workflow.json()) as { workflowId: string }
    const requests = [{ id: '1', method: 'GET', url: "Customers?$filter=Name eq 'Ada Lovelace' 'Grace Hopper'", atomicityGroup: 'g' }]
    const batch = await fetch(`${api}/$batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Workflow-Id': workflowId, 'Workflow-Index': '1', 'X-Request-Id': 'hidden-batch' },
      body: JSON.stringify({ requests }),
    })
    expect(JSON.stringify(await batch.json())).toContain('Grace Hopper')
    const said = lines.filter((line) => line.requestId === 'hidden-batch')
    expect(said.map((line) => line.msg)).toContain('request refused')
    for (const value of ['Lovelace', 'Grace']) expect(JSON.stringify(said), value).not.toContain(value)
  })

  it('logs the URL and messages as sent with Server:LogQueryValues true', async () => {
    const { api, lines } = await serverLogging(true)
    await send(api, 'shown')
    const requestLine = lines.find((line) => line.requestId === 'shown-0' && line.msg === 'request')
    expect(requestLine?.url).toBe("/api/Customers?$filter=Email%20eq%20%27ada@example.com%27%20and%20CreditLimit%20gt%201500&$top=5")
    const refused = lines.find((line) => line.requestId === 'shown-3' && line.msg === 'request refused')
    expect(refused?.message).toContain("'Name eq 'Ada Lovelace' 'Grace Hopper''")
  })
})
