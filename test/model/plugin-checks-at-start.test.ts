// What only $metadata and OpenAPI can check of a plugin (names CSDL reserves or cannot tell
// apart under the configured casing) stops the start with the plugin's file and line, before
// any database is touched, rather than answering 500 to every request for those documents.

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer } from '../../server/start.ts'
import { TEST_DATABASE_URL } from '../support/test-server.ts'

const dir = mkdtempSync(join(tmpdir(), 'entityctl-plugin-checks-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let cases = 0
/** Starts a server on a plugins folder holding `plugin` alone; resolves to the start's error. */
async function startWith(plugin: string, lowerCamelCase = false): Promise<Error> {
  const folder = join(dir, `case-${++cases}`)
  mkdirSync(folder)
  writeFileSync(join(folder, 'shop.ts'), plugin)
  const configPath = join(folder, 'entityctl.json')
  writeFileSync(configPath, JSON.stringify({
    Server: { LogLevel: 'silent', PluginsDir: folder },
    Database: { ConnectionString: TEST_DATABASE_URL },
    JWT: { SigningKey: 'k'.repeat(43) },
    ApiOptions: { EnableLowerCamelCase: lowerCamelCase },
  }))
  try {
    const server = await startServer({ configPath, port: 0, logger: pino({ level: 'silent' }) })
    await server.stop()
  } catch (error) {
    return error as Error
  }
  throw new Error('the server started')
}

const header = "import { entity, method, p, plugin } from 'entityctl/plugin'\n"

describe('a plugin mistake only $metadata finds stops the start', () => {
  it('a parameter named bindingParameter, with the file and line', async () => {
    const error = await startWith(`${header}
export default plugin({ entities: [entity('Order', { properties: {}, methods: {
  Go: method.modify('x', { params: {
    bindingParameter: p.text() } }, () => undefined) } })] })
`)
    expect(error.message).toMatch(/shop\.ts:5:5: Order\.methods\.Go\.bindingParameter: 'bindingParameter' is reserved/)
  })

  it('a method named like an entity type', async () => {
    const error = await startWith(`${header}
export default plugin({ entities: [
  entity('Order', { properties: {}, methods: { Customer: method.modify('x', () => undefined) } }),
  entity('Customer', { properties: {} })] })
`)
    expect(error.message).toMatch(/shop\.ts:\d+:\d+: Order\.methods\.Customer: 'Customer' is also the name of an entity type/)
  })

  it('a read and a modify method of the same name', async () => {
    const error = await startWith(`${header}
export default plugin({ entities: [
  entity('Order', { properties: {}, methods: { Archive: method.modify('x', () => undefined) } }),
  entity('Customer', { properties: {}, methods: { Archive: method.read('x', { returns: p.integer() }, () => 1) } })] })
`)
    expect(error.message).toMatch(/Customer\.methods\.Archive: 'Archive' is also a modify method of Order/)
  })

  it('two parameters that meet under EnableLowerCamelCase', async () => {
    const error = await startWith(`${header}
export default plugin({ entities: [entity('Order', { properties: {}, methods: {
  Go: method.modify('x', { params: { X: p.text(), x: p.integer() } }, () => undefined) } })] })
`, true)
    expect(error.message).toMatch(/shop\.ts:\d+:\d+: Order\.methods\.Go\.x: two parameters have this public name/)
  })
})
