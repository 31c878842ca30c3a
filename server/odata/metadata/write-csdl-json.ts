// The $metadata document as CSDL JSON ($metadata?$format=json), printed from csdl.ts. Like
// the XML writer it decides nothing about the model; it only spells CSDL JSON's defaults
// ($Nullable is false when absent, $Type Edm.String) and groups operation overloads by name.
//
//   { name: 'Email', type: 'Edm.String', maxLength: 254, nullable: true }  →  "Email": { "$MaxLength": 254, "$Nullable": true }

import type { Csdl, CsdlAnnotation, CsdlEntityType, CsdlEnumType, CsdlOperation, CsdlTypeRef, CsdlValue } from './csdl.ts'

type Json = string | number | boolean | null | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

export function writeCsdlJson(csdl: Csdl): JsonObject {
  const { schema } = csdl
  const members: JsonObject = {}
  for (const type of schema.types) members[type.name] = type.kind === 'EnumType' ? enumType(type) : entityType(type)
  for (const op of schema.operations) {
    const overloads = (members[op.name] ??= []) as Json[]
    overloads.push(operation(op))
  }
  const container: JsonObject = { $Kind: 'EntityContainer', ...annotations(schema.container.annotations) }
  for (const set of schema.container.entitySets) {
    const bindings: JsonObject = Object.fromEntries(set.navigationPropertyBindings.map((b) => [b.path, b.target]))
    container[set.name] = {
      $Collection: true,
      $Type: set.entityType,
      ...(set.navigationPropertyBindings.length > 0 ? { $NavigationPropertyBinding: bindings } : {}),
      ...annotations(set.annotations),
    }
  }
  members[schema.container.name] = container
  const references: JsonObject = Object.fromEntries(
    csdl.references.map((r) => [r.uri, { $Include: [{ $Namespace: r.namespace, $Alias: r.alias }] }]),
  )
  return {
    $Version: csdl.version,
    $EntityContainer: `${schema.namespace}.${schema.container.name}`,
    ...(csdl.references.length > 0 ? { $Reference: references } : {}),
    [schema.namespace]: members,
  }
}

function enumType(type: CsdlEnumType): JsonObject {
  const json: JsonObject = { $Kind: 'EnumType', ...annotations(type.annotations) }
  for (const member of type.members) {
    json[member.name] = member.value
    for (const a of member.annotations) json[`${member.name}@${a.term}`] = value(a.value)
  }
  return json
}

function entityType(type: CsdlEntityType): JsonObject {
  const json: JsonObject = { $Kind: 'EntityType', $Key: [...type.key] }
  for (const p of type.properties) json[p.name] = { ...typeRef(p), ...annotations(p.annotations) }
  for (const nav of type.navigationProperties) {
    json[nav.name] = {
      $Kind: 'NavigationProperty',
      $Type: nav.type,
      ...(nav.collection ? { $Collection: true } : {}),
      ...(nav.nullable ? { $Nullable: true } : {}),
      ...(nav.partner ? { $Partner: nav.partner } : {}),
      ...(nav.referentialConstraints.length > 0
        ? { $ReferentialConstraint: Object.fromEntries(nav.referentialConstraints.map((c) => [c.property, c.referencedProperty])) }
        : {}),
      ...(nav.onDelete ? { $OnDelete: nav.onDelete } : {}),
      ...annotations(nav.annotations),
    }
  }
  return { ...json, ...annotations(type.annotations) }
}

function operation(op: CsdlOperation): JsonObject {
  return {
    $Kind: op.kind,
    ...(op.isBound ? { $IsBound: true } : {}),
    ...(op.entitySetPath ? { $EntitySetPath: op.entitySetPath } : {}),
    ...(op.parameters.length > 0 ? { $Parameter: op.parameters.map((p) => ({ $Name: p.name, ...typeRef(p), ...annotations(p.annotations) })) } : {}),
    ...(op.returnType ? { $ReturnType: typeRef(op.returnType) } : {}),
    ...annotations(op.annotations),
  }
}

function typeRef(ref: CsdlTypeRef): JsonObject {
  const json: JsonObject = {}
  if (ref.type !== 'Edm.String') json.$Type = ref.type
  if (ref.collection) json.$Collection = true
  if (ref.nullable) json.$Nullable = true
  if (ref.maxLength !== undefined) json.$MaxLength = ref.maxLength
  if (ref.precision !== undefined) json.$Precision = ref.precision
  if (ref.scale !== undefined) json.$Scale = ref.scale
  return json
}

function annotations(list: readonly CsdlAnnotation[]): JsonObject {
  return Object.fromEntries(list.map((a) => [`@${a.term}`, value(a.value)]))
}

function value(v: CsdlValue): Json {
  switch (v.kind) {
    case 'Bool':
    case 'String':
    case 'Int':
    case 'Decimal':
      return v.value
    case 'PropertyPath':
      return { $PropertyPath: v.value }
    case 'NavigationPropertyPath':
      return { $NavigationPropertyPath: v.value }
    case 'Collection':
      return v.items.map(value)
    case 'Record':
      return Object.fromEntries(Object.entries(v.properties).map(([name, item]) => [name, value(item)]))
  }
}
