// Validators built from the official OASIS schemas, copied unchanged with their licence into
// test/fixtures/oasis (from oasis-tcs/odata-csdl-schemas, commit 49355e70) so the suite runs
// from any clone: edmx.xsd and edm.xsd for CSDL XML (libxml2 compiled to WebAssembly, so no native xmllint is needed),
// csdl.schema.json for CSDL JSON (ajv, draft-07); and the annotations against the OASIS
// vocabularies (test/fixtures/oasis/vocabularies), which no schema checks.

import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import { validateXML } from 'xmllint-wasm'
import type { Annotated, Csdl, CsdlValue } from '../../../server/odata/metadata/csdl.ts'

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

// The vocabularies' terms, read from the OASIS vocabulary files: each term's type and where it
// applies, each complex type's properties (with its base type's), each type definition's
// underlying type. The files are regular enough that their elements are read by pattern.

interface ComplexType {
  readonly base?: string
  readonly properties: ReadonlyMap<string, string>
}

interface Vocabulary {
  readonly terms: ReadonlyMap<string, { readonly type: string; readonly appliesTo?: readonly string[] }>
  readonly complexTypes: ReadonlyMap<string, ComplexType>
  readonly typeDefinitions: ReadonlyMap<string, string>
}

const VOCABULARY_FILES: Readonly<Record<string, string>> = {
  Core: 'Org.OData.Core.V1.xml',
  Capabilities: 'Org.OData.Capabilities.V1.xml',
  Validation: 'Org.OData.Validation.V1.xml',
}

const attributes = (text: string) => Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))

let vocabularies: Map<string, Vocabulary> | undefined

function loadVocabularies(): Map<string, Vocabulary> {
  const loaded = new Map<string, Vocabulary>()
  for (const [alias, file] of Object.entries(VOCABULARY_FILES)) {
    const xml = read(`vocabularies/${file}`)
    const terms = new Map([...xml.matchAll(/<Term\s([^>]*?)\/?>/g)].map((m) => {
      const a = attributes(m[1])
      return [a.Name, { type: a.Type, appliesTo: a.AppliesTo?.split(/\s+/) }]
    }))
    const complexTypes = new Map([...xml.matchAll(/<ComplexType\s([^>]*?)>([\s\S]*?)<\/ComplexType>/g)].map((m) => {
      const a = attributes(m[1])
      const properties = new Map([...m[2].matchAll(/<Property\s([^>]*?)\/?>/g)].map((p) => [attributes(p[1]).Name, attributes(p[1]).Type]))
      return [a.Name, { base: a.BaseType, properties }]
    }))
    const typeDefinitions = new Map([...xml.matchAll(/<TypeDefinition\s([^>]*?)\/?>/g)].map((m) => [attributes(m[1]).Name, attributes(m[1]).UnderlyingType]))
    loaded.set(alias, { terms, complexTypes, typeDefinitions })
  }
  return loaded
}

/** What a CSDL element is, as a term's AppliesTo names it. */
type AnnotationTarget = 'EntityContainer' | 'EntitySet' | 'EntityType' | 'Property' | 'NavigationProperty' | 'EnumType' | 'Member' | 'Action' | 'Function' | 'Parameter'

/**
 * Every annotation of the document against the official vocabularies: the term exists, applies
 * to the element it annotates, and its value has the term's type (records: each property is one
 * of the type's, with a value of its type). SAP's Common vocabulary is not checked (not copied).
 */
export function vocabularyErrors(csdl: Csdl): string[] {
  vocabularies ??= loadVocabularies()
  const errors: string[] = []
  const check = (where: string, target: AnnotationTarget, element: Annotated) => {
    for (const { term, value } of element.annotations) {
      const [alias, name] = term.split('.')
      if (alias === 'Common') continue
      const vocabulary = vocabularies!.get(alias)
      const declared = vocabulary?.terms.get(name)
      if (!declared) errors.push(`${where}: ${term} is no term of the vocabularies`)
      else if (declared.appliesTo && !declared.appliesTo.includes(target)) errors.push(`${where}: ${term} applies to ${declared.appliesTo.join(', ')}, not ${target}`)
      else errors.push(...valueErrors(`${where}/@${term}`, declared.type, value))
    }
  }
  const { schema } = csdl
  for (const type of schema.types) {
    if (type.kind === 'EnumType') {
      check(type.name, 'EnumType', type)
      for (const member of type.members) check(`${type.name}/${member.name}`, 'Member', member)
      continue
    }
    check(type.name, 'EntityType', type)
    for (const property of type.properties) check(`${type.name}/${property.name}`, 'Property', property)
    for (const navigation of type.navigationProperties) check(`${type.name}/${navigation.name}`, 'NavigationProperty', navigation)
  }
  for (const operation of schema.operations) {
    check(operation.name, operation.kind, operation)
    for (const parameter of operation.parameters) check(`${operation.name}(${parameter.name})`, 'Parameter', parameter)
  }
  check(schema.container.name, 'EntityContainer', schema.container)
  for (const set of schema.container.entitySets) check(set.name, 'EntitySet', set)
  return errors
}

const PRIMITIVE_KINDS: Readonly<Record<string, readonly CsdlValue['kind'][]>> = {
  'Edm.Boolean': ['Bool'],
  'Edm.String': ['String'],
  'Edm.Int32': ['Int'],
  'Edm.Int64': ['Int'],
  'Edm.Decimal': ['Decimal', 'Int'],
  'Edm.PrimitiveType': ['Bool', 'String', 'Int', 'Decimal'],
  'Edm.PropertyPath': ['PropertyPath'],
  'Edm.NavigationPropertyPath': ['NavigationPropertyPath'],
}

function valueErrors(where: string, type: string, value: CsdlValue): string[] {
  const collection = /^Collection\((.+)\)$/.exec(type)
  if (collection) {
    if (value.kind !== 'Collection') return [`${where}: a ${value.kind} where the vocabulary has ${type}`]
    return value.items.flatMap((item, index) => valueErrors(`${where}/${index}`, collection[1], item))
  }
  const [alias, name] = type.split('.')
  const vocabulary = vocabularies!.get(alias)
  const underlying = vocabulary?.typeDefinitions.get(name)
  if (underlying) return valueErrors(where, underlying, value)
  const complex = vocabulary?.complexTypes.get(name)
  if (complex) {
    if (value.kind !== 'Record') return [`${where}: a ${value.kind} where the vocabulary has the record ${type}`]
    return Object.entries(value.properties).flatMap(([property, propertyValue]) => {
      const propertyType = propertyOf(alias, name, property)
      return propertyType ? valueErrors(`${where}/${property}`, propertyType, propertyValue) : [`${where}: ${type} has no property ${property}`]
    })
  }
  const kinds = PRIMITIVE_KINDS[type]
  if (!kinds) return [`${where}: ${type} is no type this check knows`]
  return kinds.includes(value.kind) ? [] : [`${where}: a ${value.kind} where the vocabulary has ${type}`]
}

/** A complex type's property type, looking through its base types. */
function propertyOf(alias: string, typeName: string, property: string): string | undefined {
  for (let current: string | undefined = `${alias}.${typeName}`; current; ) {
    const [vocabulary, name]: string[] = current.split('.')
    const complex: ComplexType | undefined = vocabularies!.get(vocabulary)?.complexTypes.get(name)
    const found = complex?.properties.get(property)
    if (found) return found
    current = complex?.base
  }
  return undefined
}
