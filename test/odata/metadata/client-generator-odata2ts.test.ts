// A standard client generator consumes $metadata: odata2ts generates typed models and a
// service (bound functions and actions included) from the CSDL 4.01 XML, offline.

import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { namingPolicy } from '../../../server/model/naming.ts'
import { buildCsdl } from '../../../server/odata/metadata/build-csdl.ts'
import { writeCsdlXml } from '../../../server/odata/metadata/write-csdl-xml.ts'
import { TYPESCRIPT_5_PRELOAD } from '../../support/typescript-5.ts'
import { demoModel } from './demo-model.ts'

const require = createRequire(import.meta.url)
const CLI = require.resolve('@odata2ts/odata2ts/lib/run-cli.js')

const dirs: string[] = []

async function generate(lowerCamelCase: boolean): Promise<{ model: string; service: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'entityctl-odata2ts-'))
  dirs.push(dir)
  const xml = writeCsdlXml(buildCsdl(await demoModel(), namingPolicy(lowerCamelCase)))
  await writeFile(join(dir, 'metadata.xml'), xml)
  await writeFile(join(dir, 'typescript-5.cjs'), TYPESCRIPT_5_PRELOAD)
  // odata2ts reads the compiler options of the working directory's tsconfig.json.
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ES2022', strict: true } }))
  await promisify(execFile)(process.execPath, ['-r', './typescript-5.cjs', CLI, '-s', 'metadata.xml', '-o', 'out', '-m', 'all', '-e', 'ts'], {
    cwd: dir,
    timeout: 20_000,
  })
  return {
    model: await readFile(join(dir, 'out', 'EntityctlModel.ts'), 'utf8'),
    service: await readFile(join(dir, 'out', 'EntityctlService.ts'), 'utf8'),
  }
}

/** The members of one generated interface: `Name: string`, `Email: string | null`. */
function members(source: string, name: string): string[] {
  const body = new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`).exec(source)?.[1] ?? ''
  return [...body.matchAll(/^ {4}(\w+\??: [^;]+);$/gm)].map((m) => m[1]!)
}

describe('odata2ts generates a typed client from $metadata', () => {
  afterAll(async () => {
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  })

  it('with the declared names', async () => {
    const { model, service } = await generate(false)
    expect(members(model, 'Customer')).toEqual([
      'Guid: string',
      'Name: string',
      'Email: string | null',
      'City: string | null',
      'Country: string | null',
      'CreditLimit: number | null',
      'Title: string | null',
      'Orders?: Array<Order>',
    ])
    expect(members(model, 'Order')).toEqual([
      'Guid: string',
      'Number: number',
      'OrderDate: string | null',
      'Status: OrderStatus | null',
      'Total: number | null',
      'Title: string | null',
      'CustomerGuid: string',
      'Customer?: Customer',
      'Lines?: Array<OrderLine>',
    ])
    expect(model).toContain('export enum OrderStatus {\n    Open = "Open",\n    Closed = "Closed"\n}')
    expect(model).toContain('export interface EditableOrder extends Pick<Order, "Number" | "CustomerGuid">')
    expect(members(model, 'Order_OpenSinceParams')).toEqual(['before: string'])
    expect(members(model, 'Product_RepriceParams')).toEqual(['category: string', 'percent: number'])
    expect(service).toContain('public async OpenSince(params: Order_OpenSinceParams')
    expect(service).toContain('public async Close(')
    expect(service).toContain('public async Revenue(')
  })

  it('with EnableLowerCamelCase', async () => {
    const { model, service } = await generate(true)
    expect(members(model, 'Order')).toEqual(
      expect.arrayContaining(['guid: string', 'customerGuid: string', 'status: OrderStatus | null', 'lines?: Array<OrderLine>']),
    )
    expect(service).toContain('public async openSince(params: Order_openSinceParams')
  })
})
