// The $metadata document as CSDL XML (application/xml), printed from csdl.ts. It decides
// nothing about the model: only element order (what edmx.xsd/edm.xsd require), defaults that
// XML spells differently from JSON (Nullable is true when absent), and escaping.
//
//   { name: 'Number', type: 'Edm.Int32', nullable: false }  →  <Property Name="Number" Type="Edm.Int32" Nullable="false"/>

import type {
  Csdl,
  CsdlAnnotation,
  CsdlEntityContainer,
  CsdlEntityType,
  CsdlEnumType,
  CsdlNavigationProperty,
  CsdlOperation,
  CsdlTypeRef,
  CsdlValue,
} from './csdl.ts'

const EDMX = 'http://docs.oasis-open.org/odata/ns/edmx'
const EDM = 'http://docs.oasis-open.org/odata/ns/edm'

type Attribute = readonly [name: string, value: string | number | boolean | undefined]

interface XmlElement {
  readonly name: string
  readonly attributes: readonly Attribute[]
  readonly children: readonly XmlElement[]
  readonly text?: string
}

const element = (name: string, attributes: readonly Attribute[] = [], children: readonly XmlElement[] = []): XmlElement => ({
  name,
  attributes,
  children,
})

export function writeCsdlXml(csdl: Csdl): string {
  const { schema } = csdl
  const references = csdl.references.map((r) =>
    element('edmx:Reference', [['Uri', r.uri]], [element('edmx:Include', [['Namespace', r.namespace], ['Alias', r.alias]])]),
  )
  const schemaElement = element('Schema', [['xmlns', EDM], ['Namespace', schema.namespace]], [
    ...schema.types.map((type) => (type.kind === 'EnumType' ? enumType(type) : entityType(type))),
    ...schema.operations.map(operation),
    container(schema.container),
  ])
  const root = element('edmx:Edmx', [['xmlns:edmx', EDMX], ['Version', csdl.version]], [
    ...references,
    element('edmx:DataServices', [], [schemaElement]),
  ])
  return `<?xml version="1.0" encoding="utf-8"?>\n${print(root, '')}`
}

function enumType(type: CsdlEnumType): XmlElement {
  return element('EnumType', [['Name', type.name]], [
    ...annotations(type.annotations),
    ...type.members.map((m) => element('Member', [['Name', m.name], ['Value', m.value]], annotations(m.annotations))),
  ])
}

function entityType(type: CsdlEntityType): XmlElement {
  return element('EntityType', [['Name', type.name]], [
    element('Key', [], type.key.map((name) => element('PropertyRef', [['Name', name]]))),
    ...type.properties.map((p) =>
      element('Property', [['Name', p.name], ...typeAttributes(p), ['Nullable', p.nullable ? undefined : false]], annotations(p.annotations)),
    ),
    ...type.navigationProperties.map(navigationProperty),
    ...annotations(type.annotations),
  ])
}

function navigationProperty(nav: CsdlNavigationProperty): XmlElement {
  return element(
    'NavigationProperty',
    [['Name', nav.name], ['Type', typeName(nav)], ['Nullable', nav.nullable === false ? false : undefined], ['Partner', nav.partner]],
    [
      ...nav.referentialConstraints.map((c) =>
        element('ReferentialConstraint', [['Property', c.property], ['ReferencedProperty', c.referencedProperty]]),
      ),
      ...(nav.onDelete ? [element('OnDelete', [['Action', nav.onDelete]])] : []),
      ...annotations(nav.annotations),
    ],
  )
}

function operation(op: CsdlOperation): XmlElement {
  const returnType = op.returnType
    ? [element('ReturnType', [...typeAttributes(op.returnType), ['Nullable', op.returnType.nullable ? undefined : false]])]
    : []
  return element(op.kind, [['Name', op.name], ['IsBound', op.isBound || undefined], ['EntitySetPath', op.entitySetPath]], [
    ...annotations(op.annotations),
    ...op.parameters.map((p) =>
      element('Parameter', [['Name', p.name], ...typeAttributes(p), ['Nullable', p.nullable ? undefined : false]], annotations(p.annotations)),
    ),
    ...returnType,
  ])
}

function container(c: CsdlEntityContainer): XmlElement {
  // edm.xsd: the container's own annotations come before its entity sets.
  return element('EntityContainer', [['Name', c.name]], [
    ...annotations(c.annotations),
    ...c.entitySets.map((set) =>
      element('EntitySet', [['Name', set.name], ['EntityType', set.entityType]], [
        ...set.navigationPropertyBindings.map((b) => element('NavigationPropertyBinding', [['Path', b.path], ['Target', b.target]])),
        ...annotations(set.annotations),
      ]),
    ),
  ])
}

function typeName(ref: { readonly type: string; readonly collection: boolean }): string {
  return ref.collection ? `Collection(${ref.type})` : ref.type
}

function typeAttributes(ref: CsdlTypeRef): Attribute[] {
  return [['Type', typeName(ref)], ['MaxLength', ref.maxLength], ['Precision', ref.precision], ['Scale', ref.scale]]
}

function annotations(list: readonly CsdlAnnotation[]): XmlElement[] {
  return list.map((a) => {
    const inline = constantAttribute(a.value)
    return inline ? element('Annotation', [['Term', a.term], inline]) : element('Annotation', [['Term', a.term]], [expression(a.value)])
  })
}

/** Constants go inline as attributes: <Annotation Term="Core.Computed" Bool="true"/>. */
function constantAttribute(v: CsdlValue): Attribute | undefined {
  switch (v.kind) {
    case 'Int':
    case 'Decimal':
      return [v.kind, plainNumber(v.value)]
    case 'Bool':
    case 'String':
    case 'PropertyPath':
    case 'NavigationPropertyPath':
      return [v.kind, v.value]
    case 'Collection':
    case 'Record':
      return undefined
  }
}

function expression(v: CsdlValue): XmlElement {
  switch (v.kind) {
    case 'Collection':
      return element('Collection', [], v.items.map(expression))
    case 'Record':
      return element(
        'Record',
        [],
        Object.entries(v.properties).map(([property, value]) => {
          const inline = constantAttribute(value)
          return inline
            ? element('PropertyValue', [['Property', property], inline])
            : element('PropertyValue', [['Property', property]], [expression(value)])
        }),
      )
    default:
      return { name: v.kind, attributes: [], children: [], text: typeof v.value === 'number' ? plainNumber(v.value) : String(v.value) }
  }
}

/**
 * A number as xs:integer and xs:decimal write it, without the exponent JavaScript uses for
 * large and small ones: 1e21 → 1000000000000000000000, 1e-7 → 0.0000001.
 */
function plainNumber(v: number): string {
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(v))
  if (!match) return String(v)
  const [, sign, lead, fraction = '', exponentText] = match
  const digits = lead + fraction
  const exponent = Number(exponentText)
  // JavaScript writes an exponent from 1e21 up, past its 17 significant digits: only zeros follow them.
  return exponent >= 0 ? sign + digits.padEnd(exponent + 1, '0') : `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`
}

function print(node: XmlElement, indent: string): string {
  const attributes = node.attributes
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${escapeAttribute(String(value))}"`)
    .join('')
  const open = `${indent}<${node.name}${attributes}`
  if (node.text !== undefined) return `${open}>${escapeText(node.text)}</${node.name}>`
  if (node.children.length === 0) return `${open}/>`
  const children = node.children.map((child) => print(child, `${indent}  `)).join('\n')
  return `${open}>\n${children}\n${indent}</${node.name}>`
}

// Labels and descriptions are plugin text: characters XML 1.0 cannot carry at all (control
// characters, lone surrogates) become U+FFFD rather than an unparsable document.
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

export function escapeText(text: string): string {
  return text.replace(NOT_XML, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/** Also keeps tabs and line breaks: a parser normalises literal ones in attributes to spaces. */
export function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;')
}
