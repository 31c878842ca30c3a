// The `@odata.type` of a value whose JSON does not tell its type (OData JSON 4.01 §4.5.3,
// §3.1.2): odata.metadata=full writes it before every such property. A JSON number is read as
// an Edm.Double and a JSON string as an Edm.String, so every other number (Int32, Decimal) and
// every other string (Guid, Date, DateTimeOffset, an enumeration member) needs it; true and
// false need none. Built-in types are written `#Decimal` (4.0 requires the hash, 4.01 readers
// accept it), others qualified: `#entityctl.OrderStatus`.
//   ('Edm.Decimal') → '#Decimal'    ('Edm.String') → undefined    ('entityctl.OrderStatus') → '#entityctl.OrderStatus'

import { EDM_TYPE_OF, type ValueType } from '../semantic/bound.ts'

const TOLD_BY_JSON = new Set(['Edm.String', 'Edm.Boolean', 'Edm.Double'])

export function typeAnnotation(qualifiedType: string): string | undefined {
  if (TOLD_BY_JSON.has(qualifiedType)) return undefined
  return `#${qualifiedType.startsWith('Edm.') ? qualifiedType.slice(4) : qualifiedType}`
}

/** The annotation of a value an expression computes ($compute): its type is the expression's. */
export function valueTypeAnnotation(type: ValueType): string | undefined {
  const edm = EDM_TYPE_OF[type]
  return edm && typeAnnotation(edm)
}
