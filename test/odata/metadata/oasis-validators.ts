// Validators built from the official OASIS schemas, copied unchanged with their licence into
// test/fixtures/oasis (from oasis-tcs/odata-csdl-schemas, commit 49355e70) so the suite runs
// from any clone: edmx.xsd and edm.xsd for CSDL XML (libxml2 compiled to WebAssembly, so no native xmllint is needed),
// csdl.schema.json for CSDL JSON (ajv, draft-07).

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import { validateXML } from 'xmllint-wasm'

const SCHEMAS = fileURLToPath(new URL('../../fixtures/oasis/', import.meta.url))
const read = (file: string) => readFileSync(`${SCHEMAS}${file}`, 'utf8')

/** The schema errors of a CSDL XML document; empty when it is valid. */
export async function xsdErrors(xml: string): Promise<string[]> {
  const result = await validateXML({
    xml: [{ fileName: 'metadata.xml', contents: xml }],
    schema: [{ fileName: 'edmx.xsd', contents: read('edmx.xsd') }],
    // edmx.xsd imports edm.xsd by this relative name.
    preload: [{ fileName: 'edm.xsd', contents: read('edm.xsd') }],
  })
  return result.errors.map((error) => error.message)
}

let validateJson: ValidateFunction | undefined

/** The schema errors of a CSDL JSON document; empty when it is valid. */
export function jsonSchemaErrors(document: unknown): string[] {
  validateJson ??= new Ajv({ strict: false, allErrors: true }).compile(JSON.parse(read('csdl.schema.json')))
  return validateJson(document) ? [] : (validateJson.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
}
