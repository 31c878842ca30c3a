// A method's parameters, bound from where a call gives them: the JSON body (actions), inline
// in the path (`OpenSince(before=2024-01-01)`) or the query string (functions), parsed by the
// types the plugin declared. Pure, like the rest of the write binder.
//
// An entity-typed parameter (p.reference, p.many) reaches the method as the Guid of each entity
// it names, given in any form $metadata's entity type allows (OData JSON 18, 4.01 8.5):
//
//   "target": {"Guid": "…"}  |  "target": {"@odata.id": "Items(…)"}  |  "target@odata.bind": "Items(…)"
//   "target": "…" (the bare Guid)  |  "many": [ any of these ]  |  "many@odata.bind": ["Items(…)", …]
//
// and a function's, in the query string or a parameter alias, as that JSON: `?target={"Guid":"…"}`.

import { RequestError, ServiceError } from '../../errors.ts'
import type { MethodDecl, PropertyDecl, ScalarDecl } from '../../model/declarations.ts'
import { KEY, type ScalarProperty } from '../../model/model.ts'
import { parseClientValue, toRuleValue } from '../../rules/values.ts'
import { parseParameterValue } from '../parser/query-options-parser.ts'
import type { ExpressionSyntax, LiteralSyntax, PathArgumentSyntax } from '../parser/syntax.ts'
import { keyFromBinding, referenceId, type BodyContext } from './bind-body.ts'
import { boundProperty } from './control-information.ts'

const BIND = '@odata.bind'

export function bindParameters(
  context: BodyContext,
  method: MethodDecl,
  body: unknown,
  inline: readonly PathArgumentSyntax[] | undefined,
  custom: ReadonlyMap<string, string>,
  aliases: ReadonlyMap<string, ExpressionSyntax>,
): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw RequestError.invalid('The body of an action must be a JSON object of its parameters, as {"percent": 5}.')
  const fromBody = body as Record<string, unknown>
  const input: Record<string, unknown> = {}
  const known = new Set<string>()
  for (const [name, decl] of Object.entries(method.params)) {
    const publicName = context.naming.toPublic(name)
    known.add(publicName)
    const inlineArg = inline?.find((a) => a.name === publicName)
    let value: unknown
    // `many@odata.bind`, or 4.01's `many@bind`.
    const bindName = Object.keys(fromBody).find((key) => boundProperty(key) === publicName)
    const bound = bindName !== undefined
    if (bound && (decl.kind === 'scalar' || publicName in fromBody)) {
      const problem = decl.kind === 'scalar' ? 'names no entity; give its value' : `is given twice, as ${publicName} and ${publicName}${BIND}`
      throw new ServiceError('InvalidParameter', `The parameter '${publicName}' ${problem}.`, { target: publicName })
    }
    const places = [publicName in fromBody || bound ? 'the body' : '', inlineArg ? 'the path' : '', custom.has(publicName) ? 'the query string' : ''].filter(Boolean)
    if (places.length > 1) throw new ServiceError('InvalidParameter', `The parameter '${publicName}' is given twice, in ${places.join(' and in ')}; give it once.`, { target: publicName })
    if (publicName in fromBody) value = checkValue(context, name, decl, fromBody[publicName])
    else if (bound) value = checkValue(context, name, decl, fromBody[bindName])
    else if (inlineArg) value = checkValue(context, name, decl, inlineValue(publicName, decl, inlineArg.value, aliases))
    else if (custom.has(publicName)) value = fromQueryString(context, name, decl, custom.get(publicName)!)
    else if (decl.default !== undefined) value = defaultOf(name, decl)
    else if (isRequired(decl)) throw new ServiceError('MissingParameter', `The parameter '${publicName}' is required.`, { target: publicName })
    // A null the client gives is its value, not a call for the default; a non-nullable parameter refuses it.
    if (value === null && isRequired(decl)) throw new ServiceError('InvalidParameter', `The parameter '${publicName}' cannot be null.`, { target: publicName })
    input[name] = value ?? null
  }
  // `many@odata.bind` names the parameter many, as `by@odata.type` annotates by (OData JSON 20):
  // annotations are the client's, of the body (`@odata.context`) or of a parameter it declares.
  const given = [...Object.keys(fromBody).filter((name) => !name.startsWith('@')).map((name) => name.split('@')[0]), ...(inline ?? []).map((arg) => arg.name ?? '')]
  for (const name of given) {
    if (!known.has(name)) throw new ServiceError('InvalidParameter', `Unknown parameter '${name}'; parameters: ${[...known].join(', ') || '(none)'}.`, { target: name })
  }
  return input
}

/**
 * `before=2024-01-01`, or `before=@b` with `@b` in the query string (URL Conventions 5.1.3);
 * an alias given no value is null.
 */
function inlineValue(name: string, decl: PropertyDecl, value: PathArgumentSyntax['value'], aliases: ReadonlyMap<string, ExpressionSyntax>): unknown {
  const syntax = value.kind === 'alias' ? aliases.get(value.name) : value
  if (syntax === undefined) return null
  if (syntax.kind !== 'literal') throw new ServiceError('InvalidParameter', `The parameter '${name}' needs a literal value, as in ${name}=2024-01-01.`, { target: name })
  return literalValue(syntax, decl)
}

/**
 * A URL literal as the same value in a JSON body: a number. The lexer keeps a decimal literal
 * (`1.5`) as its exact digits, which a decimal parameter checks as such; a double takes the number.
 */
function literalValue(syntax: LiteralSyntax, decl: PropertyDecl): unknown {
  if (typeof syntax.value === 'bigint') return Number(syntax.value)
  if (syntax.type === 'decimal' && decl.kind === 'scalar' && decl.type === 'Double') return Number(syntax.value)
  return syntax.value
}

/** A declared default as a given value reaches the method: a Date default of a date parameter as `YYYY-MM-DD`. */
function defaultOf(name: string, decl: MethodDecl['params'][string]): unknown {
  return decl.kind === 'scalar' ? toRuleValue(scalarOf(name, decl), decl.default) : decl.default
}

function isRequired(decl: PropertyDecl): boolean {
  return decl.kind !== 'collection' && decl.required
}

function fromQueryString(context: BodyContext, name: string, decl: PropertyDecl, text: string): unknown {
  if (decl.kind !== 'scalar' && /^\s*[[{]/.test(text)) return checkValue(context, name, decl, parseJson(name, text))
  let value: unknown = text
  try {
    const parsed = parseParameterValue(text, name)
    if (parsed.kind === 'literal') value = literalValue(parsed, decl)
  } catch {
    // An unquoted string ('category=Tools') is accepted as the text it is.
  }
  // `word=null` is the null literal, as in the path; the text null is `word='null'`.
  if (decl.kind === 'scalar' && ['Text', 'ProperNoun', 'MultilineText', 'Email', 'Enum'].includes(decl.type) && typeof value !== 'string' && value !== null) value = text
  return checkValue(context, name, decl, value)
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new ServiceError('InvalidParameter', `The parameter '${name}' is not valid JSON.`, { target: name })
  }
}

function checkValue(context: BodyContext, name: string, decl: PropertyDecl, value: unknown): unknown {
  if (value === undefined || value === null) return value
  if (decl.kind === 'reference') return entityKey(context, name, decl.target, value)
  if (decl.kind === 'collection') {
    if (!Array.isArray(value)) throw new ServiceError('InvalidParameter', `The parameter '${name}' is a collection of ${decl.target}: give a JSON array.`, { target: name })
    const { maxCollectionMembers } = context.limits
    if (value.length > maxCollectionMembers) {
      throw new ServiceError('InvalidParameter', `The parameter '${name}' has ${value.length} members; at most ${maxCollectionMembers} (ApiOptions:MaxCollectionMembers).`, { target: name })
    }
    return value.map((item) => entityKey(context, name, decl.target, item))
  }
  const parsed = parseClientValue(scalarOf(name, decl), value)
  if ('problem' in parsed) throw new ServiceError('InvalidParameter', `The parameter '${name}' ${parsed.problem}.`, { target: name })
  if (decl.values && !decl.values.includes(parsed.value as string)) {
    throw new ServiceError('InvalidParameter', `The parameter '${name}' must be one of ${decl.values.join(', ')}.`, { target: name })
  }
  const problem = boundsProblem(decl, parsed.value)
  if (problem) throw new ServiceError('InvalidParameter', `The parameter '${name}' ${problem}.`, { target: name })
  return parsed.value
}

/** The declared length and range ($metadata publishes them as MaxLength, Validation.Minimum/Maximum), as a property's are checked. */
function boundsProblem(decl: ScalarDecl, value: unknown): string | undefined {
  if (decl.maxLength !== undefined && typeof value === 'string' && [...value].length > decl.maxLength) {
    return `may have at most ${decl.maxLength} characters (has ${[...value].length})`
  }
  if (decl.min !== undefined && typeof value === 'number' && value < decl.min) return `must be at least ${decl.min}`
  if (decl.max !== undefined && typeof value === 'number' && value > decl.max) return `must be at most ${decl.max}`
  return undefined
}

/**
 * The Guid of the entity an entity-typed parameter names: the entity with its key, a reference
 * (`@odata.id`), an `@odata.bind` value or the bare Guid.
 */
function entityKey(context: BodyContext, name: string, targetName: string, value: unknown): string {
  const target = context.model.entities.get(targetName)!
  const keyName = context.naming.toPublic(KEY)
  const given = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  const key = keyFromBinding(context, given ? (referenceId(given) ?? given[keyName]) : value, target)
  if (key !== undefined) return key
  const forms = `{"${keyName}": "<Guid>"}, {"@odata.id": "${target.setName}(<Guid>)"} or the Guid`
  throw new ServiceError('InvalidParameter', `The parameter '${name}' names a ${target.name}: give ${forms}.`, { target: name })
}

/** A scalar parameter as the value conversions of rules/values.ts take a property. */
function scalarOf(name: string, decl: ScalarDecl): ScalarProperty {
  return { kind: 'scalar', name, type: decl.type, decl, column: name } as unknown as ScalarProperty
}
