// $filter: text → one boolean ExpressionSyntax (the binder checks it is boolean).
//   $filter=Name eq 'x' and Total gt 100  →  (and (eq Name 'x') (gt Total 100))

import { ExpressionParser } from './expression-parser.ts'
import type { ExpressionSyntax } from './syntax.ts'

/** Parses a whole filter expression; `option` names it in errors (`$filter`, `@p`…). */
export function parseFilter(text: string, option = '$filter'): ExpressionSyntax {
  const parser = new ExpressionParser(text, option)
  const expression = parser.parseExpression()
  parser.expectEnd()
  return expression
}
