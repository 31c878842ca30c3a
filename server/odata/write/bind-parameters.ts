// A method's parameters, bound from where a call gives them: the JSON body (actions), inline
// in the path (`OpenSince(before=2024-01-01)`) or the query string (functions), parsed by the
// types the plugin declared. Pure, like the rest of the write binder.

import { RequestError, ServiceError } from '../../errors.ts'
import type { MethodDecl, PropertyDecl } from '../../model/declarations.ts'
import type { ScalarProperty } from '../../model/model.ts'
import type { NamingPolicy } from '../../model/naming.ts'
import { parseClientValue } from '../../rules/values.ts'
import { parseParameterValue } from '../parser/query-options-parser.ts'
import type { ExpressionSyntax, PathArgumentSyntax } from '../parser/syntax.ts'

export function bindParameters(
  naming: NamingPolicy,
  method: MethodDecl,
  body: unknown,
  inline: readonly PathArgumentSyntax[] | undefined,
  custom: ReadonlyMap<string, string>,
  aliases: ReadonlyMap<string, ExpressionSyntax>,
): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw RequestError.invalid('The parameters of an action are a JSON object.')
  const fromBody = body as Record<string, unknown>
  const input: Record<string, unknown> = {}
  const known = new Set<string>()
  for (const [name, decl] of Object.entries(method.params)) {
    const publicName = naming.toPublic(name)
    known.add(publicName)
    const inlineArg = inline?.find((a) => a.name === publicName)
    let value: unknown
    if (publicName in fromBody) value = checkValue(name, decl, fromBody[publicName])
    else if (inlineArg) value = checkValue(name, decl, inlineValue(publicName, inlineArg.value, aliases))
    else if (custom.has(publicName)) value = fromQueryString(name, decl, custom.get(publicName)!)
    if (value === undefined || value === null) {
      if ('default' in decl && decl.default !== undefined) value = decl.default
      else if (isRequired(decl)) throw new ServiceError('MissingParameter', `The parameter '${publicName}' is required.`, { target: publicName })
      else value = null
    }
    input[name] = value
  }
  const given = [...Object.keys(fromBody).filter((name) => !name.startsWith('@')), ...(inline ?? []).map((arg) => arg.name ?? '')]
  for (const name of given) {
    if (!known.has(name)) throw new ServiceError('InvalidParameter', `Unknown parameter '${name}'; parameters: ${[...known].join(', ') || '(none)'}.`, { target: name })
  }
  return input
}

/**
 * `before=2024-01-01`, or `before=@b` with `@b` in the query string (URL Conventions 5.1.3);
 * an alias given no value is null.
 */
function inlineValue(name: string, value: PathArgumentSyntax['value'], aliases: ReadonlyMap<string, ExpressionSyntax>): unknown {
  const syntax = value.kind === 'alias' ? aliases.get(value.name) : value
  if (syntax === undefined) return null
  if (syntax.kind !== 'literal') throw new ServiceError('InvalidParameter', `The parameter '${name}' needs a literal value, as in ${name}=2024-01-01.`, { target: name })
  return typeof syntax.value === 'bigint' ? Number(syntax.value) : syntax.value
}

function isRequired(decl: PropertyDecl): boolean {
  return decl.kind !== 'collection' && decl.required
}

function fromQueryString(name: string, decl: PropertyDecl, text: string): unknown {
  let value: unknown = text
  try {
    const parsed = parseParameterValue(text, name)
    if (parsed.kind === 'literal') value = parsed.value
  } catch {
    // An unquoted string ('category=Tools') is accepted as the text it is.
  }
  if (decl.kind === 'scalar' && ['Text', 'ProperNoun', 'MultilineText', 'Email', 'Enum'].includes(decl.type) && typeof value !== 'string') value = text
  return checkValue(name, decl, typeof value === 'bigint' ? Number(value) : value)
}

function checkValue(name: string, decl: PropertyDecl, value: unknown): unknown {
  if (value === undefined || value === null) return value
  if (decl.kind !== 'scalar') {
    if (typeof value !== 'string') throw new ServiceError('InvalidParameter', `The parameter '${name}' expects a Guid.`, { target: name })
    return value
  }
  const parsed = parseClientValue({ kind: 'scalar', name, type: decl.type, decl, column: name } as unknown as ScalarProperty, value)
  if ('problem' in parsed) throw new ServiceError('InvalidParameter', `The parameter '${name}' ${parsed.problem}.`, { target: name })
  if (decl.values && !decl.values.includes(parsed.value as string)) {
    throw new ServiceError('InvalidParameter', `The parameter '${name}' must be one of ${decl.values.join(', ')}.`, { target: name })
  }
  return parsed.value
}
