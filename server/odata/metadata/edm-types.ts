// Declared property types → EDM types with their facets, for properties, parameters and
// return types alike:  p.decimal(12, 2) → Edm.Decimal Precision=12 Scale=2,
// p.text().oneOf('Open', 'Closed') on Order.Status → enumeration type entityctl.OrderStatus.

import type { PropertyDecl, ScalarDecl, ScalarType } from '../../model/declarations.ts'
import type { CsdlEnumType, CsdlTypeRef } from './csdl.ts'

const EDM: Readonly<Record<Exclude<ScalarType, 'Enum'>, string>> = {
  Text: 'Edm.String',
  ProperNoun: 'Edm.String',
  MultilineText: 'Edm.String',
  Email: 'Edm.String',
  Integer: 'Edm.Int32',
  Decimal: 'Edm.Decimal',
  Double: 'Edm.Double',
  Boolean: 'Edm.Boolean',
  Date: 'Edm.Date',
  DateTimeOffset: 'Edm.DateTimeOffset',
  TimeOfDay: 'Edm.TimeOfDay',
  Guid: 'Edm.Guid',
}

/** Fractional second digits of Edm.DateTimeOffset and Edm.TimeOfDay values we write. */
export const TIME_PRECISION = 3

// A CSDL simple identifier (edm.xsd TSimpleIdentifier): what an enumeration member must be.
const SIMPLE_IDENTIFIER = /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Nd}\p{Mn}\p{Mc}\p{Pc}\p{Cf}]{0,127}$/u

/**
 * The schema's names, so generated ones (enumeration types, the container) never clash
 * with declared ones (entity types, methods).
 */
export class SchemaNames {
  readonly #taken = new Set<string>()
  has(name: string): boolean {
    return this.#taken.has(name)
  }
  add(name: string): void {
    this.#taken.add(name)
  }
  /** `base`, or `base2`, `base3`... when taken; the result is reserved. */
  free(base: string): string {
    let name = base
    for (let n = 2; this.#taken.has(name); n++) name = `${base}${n}`
    this.#taken.add(name)
    return name
  }
}

/** Collects the enumeration types the properties and parameters need, in order of use. */
export class EnumTypes {
  readonly types: CsdlEnumType[] = []
  readonly #namespace: string
  readonly #names: SchemaNames
  constructor(namespace: string, names: SchemaNames) {
    this.#namespace = namespace
    this.#names = names
  }
  /**
   * The qualified enumeration type for these values, or undefined when a value is no
   * identifier ('In progress'): such a list stays Edm.String with Validation.AllowedValues.
   */
  declare(baseName: string, values: readonly string[]): string | undefined {
    const members = values.length > 0 && new Set(values).size === values.length && values.every((v) => SIMPLE_IDENTIFIER.test(v))
    if (!members) return undefined
    const name = this.#names.free(baseName)
    // Values are data, not model names: the naming policy does not touch them.
    this.types.push({ kind: 'EnumType', name, members: values.map((v, i) => ({ name: v, value: i, annotations: [] })), annotations: [] })
    return `${this.#namespace}.${name}`
  }
}

/** The EDM type of a scalar; `enumType` is the declared enumeration type of an Enum, if any. */
export function scalarTypeRef(decl: ScalarDecl, enumType: string | undefined): CsdlTypeRef {
  if (decl.type === 'Enum') return { type: enumType ?? 'Edm.String', collection: false }
  const type = EDM[decl.type]
  if (decl.type === 'Decimal') return { type, collection: false, precision: decl.precision, scale: decl.scale }
  if (type === 'Edm.String' && decl.maxLength !== undefined) return { type, collection: false, maxLength: decl.maxLength }
  // CSDL reads a missing Precision as whole seconds; values carry milliseconds (JS Date).
  if (decl.type === 'DateTimeOffset' || decl.type === 'TimeOfDay') return { type, collection: false, precision: TIME_PRECISION }
  return { type, collection: false }
}

/** Parameters and return types may also be an entity or a collection of them. */
export function typeRefOf(decl: PropertyDecl, namespace: string, enumType: string | undefined): CsdlTypeRef {
  switch (decl.kind) {
    case 'scalar':
      return scalarTypeRef(decl, enumType)
    case 'reference':
      return { type: `${namespace}.${decl.target}`, collection: false }
    case 'collection':
      return { type: `${namespace}.${decl.target}`, collection: true }
  }
}
