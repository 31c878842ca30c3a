// Entity methods → bound OData operations: read methods are functions (GET), modify methods
// actions (POST). An instance method binds to the entity type, a static one to the collection,
// which is what the routes /api/Orders(<key>)/Close and /api/Orders/OpenSince() mean in OData:
//
//   OpenSince: method.read('...', { static: true, params: { before: p.date().required() },
//                                   returns: p.many('Order') })  →
//     <Function Name="OpenSince" IsBound="true" EntitySetPath="bindingParameter">
//       <Parameter Name="bindingParameter" Type="Collection(entityctl.Order)" Nullable="false"/>
//       <Parameter Name="before" Type="Edm.Date" Nullable="false"/>
//       <ReturnType Type="Collection(entityctl.Order)" Nullable="false"/>

import type { MethodDecl, PropertyDecl } from '../../model/declarations.ts'
import type { EntityModel } from '../../model/model.ts'
import { PluginError } from '../../model/plugin-error.ts'
import { annotate, constraints, documentation } from './annotations.ts'
import { qualified, type BuildContext } from './build-context.ts'
import type { CsdlOperation, CsdlParameter, CsdlTypeRef } from './csdl.ts'
import { typeRefOf } from './edm-types.ts'

/** The name of the binding parameter (the entity or the collection the method is called on). */
export const BINDING_PARAMETER = 'bindingParameter'

type ParamDecl = MethodDecl['params'][string]

export function buildOperation(entity: EntityModel, name: string, method: MethodDecl, context: BuildContext): CsdlOperation {
  const binding: CsdlParameter = {
    name: BINDING_PARAMETER,
    type: qualified(context, entity.name),
    collection: method.static,
    nullable: false,
    annotations: [],
  }
  const declared = Object.entries(method.params).map(([paramName, decl]) => parameter(entity, name, paramName, decl, context))
  checkUnique(entity, name, declared.map((p) => p.parameter.name))
  // CSDL wants optional parameters after the others (Core.OptionalParameter).
  const parameters = [...declared.filter((p) => !p.optional), ...declared.filter((p) => p.optional)].map((p) => p.parameter)
  const returnsOwnType = method.returns !== undefined && method.returns.kind !== 'scalar' && method.returns.target === entity.name
  return {
    kind: method.kind === 'read' ? 'Function' : 'Action',
    name: context.naming.toPublic(name),
    isBound: true,
    // Entities of the method's own type come from its own set: context URLs and links know where.
    entitySetPath: returnsOwnType ? BINDING_PARAMETER : undefined,
    parameters: [binding, ...parameters],
    returnType: returnTypeOf(entity, name, method, context),
    annotations: method.description ? [annotate.description(method.description)] : [],
  }
}

function parameter(
  entity: EntityModel,
  method: string,
  name: string,
  decl: ParamDecl,
  context: BuildContext,
): { parameter: CsdlParameter; optional: boolean } {
  const publicName = context.naming.toPublic(name)
  if (publicName === BINDING_PARAMETER) {
    const problem = `'${BINDING_PARAMETER}' is reserved for the entity the method is called on`
    throw new PluginError(entity.source, `${entity.name}.methods.${method}.${name}`, problem)
  }
  const enumType = enumTypeOf(decl, `${entity.name}${method}${capitalize(name)}`, context)
  const required = decl.kind !== 'collection' && decl.required
  // Spec 4.3 rule 2: a parameter is optional when it is nullable or has a default.
  const optional = !required || decl.default !== undefined
  const annotations = [...documentation(decl), ...constraints(decl, enumType)]
  if (optional) annotations.push(annotate.optionalParameter(literal(decl, decl.default)))
  const type = typeRefOf(decl, context.namespace, enumType)
  return { parameter: { name: publicName, ...type, nullable: decl.kind !== 'collection' && !required, annotations }, optional }
}

/** Two declared names may meet after casing: X, x → x. */
function checkUnique(entity: EntityModel, method: string, names: readonly string[]): void {
  const seen = new Set<string>()
  for (const name of names) {
    if (seen.has(name)) throw new PluginError(entity.source, `${entity.name}.methods.${method}.${name}`, 'two parameters have this public name in $metadata')
    seen.add(name)
  }
}

function returnTypeOf(entity: EntityModel, method: string, decl: MethodDecl, context: BuildContext): CsdlOperation['returnType'] {
  const returns = decl.returns
  if (returns === undefined) {
    // A function must declare a return type; a read method that returns nothing answers
    // 204, which is what a null of any nullable type looks like on the wire.
    // REVISIT: once the loader requires `returns` on read methods, only actions get here.
    return decl.kind === 'read' ? { type: 'Edm.String', collection: false, nullable: true } : undefined
  }
  const enumType = enumTypeOf(returns, `${entity.name}${method}Result`, context)
  const type: CsdlTypeRef = typeRefOf(returns, context.namespace, enumType)
  // A collection result is never null (at worst empty); a single one may be.
  return { ...type, nullable: returns.kind === 'collection' ? false : !returns.required }
}

function enumTypeOf(decl: PropertyDecl, baseName: string, context: BuildContext): string | undefined {
  return decl.kind === 'scalar' && decl.type === 'Enum' ? context.enums.declare(baseName, decl.values ?? []) : undefined
}

function capitalize(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1)
}

/** A default as Core.OptionalParameter/DefaultValue wants it: the literal a URL would carry. */
function literal(decl: ParamDecl, value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value instanceof Date) return decl.kind === 'scalar' && decl.type === 'Date' ? value.toISOString().slice(0, 10) : value.toISOString()
  return undefined
}
