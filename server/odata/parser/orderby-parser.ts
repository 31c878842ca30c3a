// $orderby: text → items of expression and direction.
//   $orderby=Customer/Name desc,Total  →  [Customer/Name desc, Total asc]

import { ExpressionParser } from './expression-parser.ts'
import type { OrderbyItemSyntax } from './syntax.ts'

// desc first: it is the one clients write (asc is the default), so it wins a tie for a hint.
const DIRECTIONS = ['desc', 'asc']

export function parseOrderby(text: string, option = '$orderby'): OrderbyItemSyntax[] {
  const parser = new ExpressionParser(text, option)
  const items = readOrderbyItems(parser)
  if (!parser.lexer.is('end')) parser.lexer.expected("',' or end of input")
  return items
}

/** Items separated by `,`, each `commonExpr [asc|desc]`; stops at anything else. */
export function readOrderbyItems(parser: ExpressionParser): OrderbyItemSyntax[] {
  const lexer = parser.lexer
  const items: OrderbyItemSyntax[] = []
  for (;;) {
    const position = lexer.start
    const expression = parser.parseExpression()
    let direction: 'asc' | 'desc' = 'asc'
    if (lexer.isKeyword('asc') || lexer.isKeyword('desc')) {
      direction = lexer.lower === 'desc' ? 'desc' : 'asc'
      lexer.next()
    }
    items.push({ kind: 'orderby', expression, direction, position })
    // No context takes a name after an item: it is a misspelt direction or operator.
    if (lexer.is('identifier')) parser.failAfterOperand("asc, desc, ',' or the end of $orderby", DIRECTIONS)
    if (!lexer.is(',')) return items
    lexer.next()
  }
}
