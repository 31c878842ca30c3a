import { describe, expect, it } from 'vitest'
import { parseFilter } from '../../../server/odata/parser/filter-parser.ts'
import { countExpressionNodes } from '../../../server/odata/parser/node-count.ts'
import type { BinarySyntax, LambdaSyntax } from '../../../server/odata/parser/syntax.ts'
import { errorOf, show } from './notation.ts'

const OPERATORS: [string, string][] = [
  ["Name eq 'x'", "(eq Name 'x')"],
  ["Name ne 'x'", "(ne Name 'x')"],
  ['Total gt 100', '(gt Total 100)'],
  ['Total ge 100', '(ge Total 100)'],
  ['Total lt 1.5', '(lt Total decimal:1.5)'],
  ['Total le -3', '(le Total -3)'],
  ['Name eq null', '(eq Name null)'],
  ['Active', 'Active'],
  ['true', 'true'],
  ['Total gt @min', '(gt Total @min)'],
  ['Price add 1 eq 2', '(eq (add Price 1) 2)'],
  ['a add b mul c', '(add a (mul b c))'],
  ['a mul b add c', '(add (mul a b) c)'],
  ['a sub b sub c', '(sub (sub a b) c)'],
  ['a div b divby c mod d', '(mod (divby (div a b) c) d)'],
  ['a add b gt c mul d', '(gt (add a b) (mul c d))'],
  ['a eq 1 and b eq 2 or c eq 3', '(or (and (eq a 1) (eq b 2)) (eq c 3))'],
  ['a eq 1 or b eq 2 and c eq 3', '(or (eq a 1) (and (eq b 2) (eq c 3)))'],
  ['(a eq 1 or b eq 2) and c eq 3', '(and (or (eq a 1) (eq b 2)) (eq c 3))'],
  ['a eq b eq c', '(eq (eq a b) c)'],
  ['a gt b eq true', '(eq (gt a b) true)'],
  ['a eq b gt c', '(eq a (gt b c))'],
  ['a lt b ne c ge d', '(ne (lt a b) (ge c d))'],
  ['not Active', '(not Active)'],
  ['not (a eq b)', '(not (eq a b))'],
  ['not(a eq b)', '(not (eq a b))'],
  ['not Active eq true', '(eq (not Active) true)'],
  ['not not Active', '(not (not Active))'],
  ["not contains(Name,'x')", "(not contains(Name,'x'))"],
  ['-Price gt 5', '(gt (- Price) 5)'],
  ['- 5 lt x', '(lt (- 5) x)'],
  ['-(a add b)', '(- (add a b))'],
  ['a sub -b', '(sub a (- b))'],
  ["Name in ('a','b')", "(in Name ['a','b'])"],
  ["Name in ('a')", "(in Name ['a'])"],
  ['Id in ()', '(in Id [])'],
  ['Name in @list', '(in Name @list)'],
  ["Name in ('a',@p,3)", "(in Name ['a',@p,3])"],
  ['Customer/Name in Tags', '(in Customer/Name Tags)'],
  ["not Name in ('a','b')", "(not (in Name ['a','b']))"],
  ["Name in ('a') and Total gt 1", "(and (in Name ['a']) (gt Total 1))"],
  ['Price add 1 in (2,3)', '(add Price (in 1 [2,3]))'],
  ["Style has Sales.Pattern'Yellow'", "(has Style enum:Sales.Pattern'Yellow')"],
  ["Style has 'Yellow' eq true", "(eq (has Style 'Yellow') true)"],
  ["Name EQ 'x' AND Total GT 5", "(and (eq Name 'x') (gt Total 5))"],
  ["Name Eq 'x' Or NOT Active", "(or (eq Name 'x') (not Active))"],
  ["Name IN ('a')", "(in Name ['a'])"],
  ['a DivBy b', '(divby a b)'],
  ['(((a)))', 'a'],
  ["  Name   eq\t'x'  ", "(eq Name 'x')"],
  ['Date ge 2024-01-01 and Date lt 2024-02-01', '(and (ge Date date:2024-01-01) (lt Date date:2024-02-01))'],
  ['Created gt 2024-01-31T10:00:00+02:00', '(gt Created dateTimeOffset:2024-01-31T10:00:00+02:00)'],
  ['Guid eq 0b5f0000-0000-0000-0000-000000000001', '(eq Guid guid:0b5f0000-0000-0000-0000-000000000001)'],
  ["Span gt duration'PT1H'", '(gt Span duration:PT1H)'],
]

const FUNCTIONS: [string, string][] = [
  ["contains(Name,'x')", "contains(Name,'x')"],
  ["startswith(Name,'A')", "startswith(Name,'A')"],
  ["endswith(Name,'z')", "endswith(Name,'z')"],
  ['length(Name) gt 3', '(gt length(Name) 3)'],
  ["indexof(Name,'x') eq 1", "(eq indexof(Name,'x') 1)"],
  ['substring(Name,1)', 'substring(Name,1)'],
  ['substring(Name,1,2)', 'substring(Name,1,2)'],
  ["tolower(Name) eq 'x'", "(eq tolower(Name) 'x')"],
  ['toupper(Name)', 'toupper(Name)'],
  ['trim(Name)', 'trim(Name)'],
  ["concat(concat(First,' '),Last)", "concat(concat(First,' '),Last)"],
  ["matchesPattern(Name,'^A.*e$')", "matchespattern(Name,'^A.*e$')"],
  ['year(OrderDate) eq 2024', '(eq year(OrderDate) 2024)'],
  ['month(OrderDate)', 'month(OrderDate)'],
  ['day(OrderDate)', 'day(OrderDate)'],
  ['hour(Created)', 'hour(Created)'],
  ['minute(Created)', 'minute(Created)'],
  ['second(Created)', 'second(Created)'],
  ['fractionalseconds(Created)', 'fractionalseconds(Created)'],
  ['date(Created) eq 2024-01-31', '(eq date(Created) date:2024-01-31)'],
  ['time(Created) lt 12:00', '(lt time(Created) timeOfDay:12:00)'],
  ['Created lt now()', '(lt Created now())'],
  ['maxdatetime()', 'maxdatetime()'],
  ['mindatetime( )', 'mindatetime()'],
  ['totaloffsetminutes(Created)', 'totaloffsetminutes(Created)'],
  ['round(Total) eq 5', '(eq round(Total) 5)'],
  ['floor(Total)', 'floor(Total)'],
  ['ceiling(Total div 2)', 'ceiling((div Total 2))'],
  ['cast(Price,Edm.Int32) gt 5', '(gt cast(Price,type:Edm.Int32) 5)'],
  ['cast(Edm.String)', 'cast(type:Edm.String)'],
  ['cast(Tags, Collection(Edm.String))', 'cast(Tags,type:Collection(Edm.String))'],
  ['isof(Sales.BigOrder)', 'isof(type:Sales.BigOrder)'],
  ['isof($it,Sales.BigOrder)', 'isof($it,type:Sales.BigOrder)'],
  ['isof(Customer, Sales.Vip)', 'isof(Customer,type:Sales.Vip)'],
  ["CONTAINS(Name,'x')", "contains(Name,'x')"],
  ['ToLower(Name)', 'tolower(Name)'],
  ["contains( Name , 'x' )", "contains(Name,'x')"],
  ["contains (Name,'x')", "contains(Name,'x')"],
  ["contains(tolower(Customer/Name),'acme') and year(OrderDate) ge 2020", "(and contains(tolower(Customer/Name),'acme') (ge year(OrderDate) 2020))"],
]

const PATHS: [string, string][] = [
  ["Customer/Name eq 'x'", "(eq Customer/Name 'x')"],
  ["a/b/c eq 'text'", "(eq a/b/c 'text')"],
  ['$it/Total gt 5', '(gt $it/Total 5)'],
  ["$this eq 'x'", "(eq $this 'x')"],
  ['Customer/Sales.Vip/Rank gt 1', '(gt Customer/Sales.Vip/Rank 1)'],
  ['Ünïcödé eq 1', '(eq Ünïcödé 1)'],
  ['_private eq 1', '(eq _private 1)'],
  ['Lines/any(l:l/Quantity gt 8)', 'Lines/any(l:(gt l/Quantity 8))'],
  ['Lines/all(l:l/Quantity gt 8)', 'Lines/all(l:(gt l/Quantity 8))'],
  ['Lines/any()', 'Lines/any()'],
  ['Lines/ANY(l:l/Quantity gt 8)', 'Lines/any(l:(gt l/Quantity 8))'],
  ['Lines/any( l : l/Quantity gt 8 )', 'Lines/any(l:(gt l/Quantity 8))'],
  ["Lines/any(l:l/Product/Tags/any(t:t eq 'x'))", "Lines/any(l:l/Product/Tags/any(t:(eq t 'x')))"],
  ['Lines/any(l:l/Quantity gt $it/MinQuantity)', 'Lines/any(l:(gt l/Quantity $it/MinQuantity))'],
  ['Customer/Orders/any(o:o/Total gt 5)', 'Customer/Orders/any(o:(gt o/Total 5))'],
  ['Lines/any(l:l/Quantity gt 8 and l/Price lt 5)', 'Lines/any(l:(and (gt l/Quantity 8) (lt l/Price 5)))'],
  ['not Lines/any()', '(not Lines/any())'],
  ['Lines/$count gt 3', '(gt Lines/$count 3)'],
  ['Lines/$count($filter=Quantity gt 1) gt 0', '(gt Lines/$count((gt Quantity 1)) 0)'],
  ['Lines/$count(filter=Quantity gt 1) gt 0', '(gt Lines/$count((gt Quantity 1)) 0)'],
  ['Customer/Orders/$count ge 2', '(ge Customer/Orders/$count 2)'],
  ["Name eq 'x' and Lines/any(l:l/Quantity gt 8)", "(and (eq Name 'x') Lines/any(l:(gt l/Quantity 8)))"],
]

describe('parseFilter', () => {
  it.each(OPERATORS)('parses operators and precedence: %s', (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected)
  })

  it.each(FUNCTIONS)('parses built-in function calls: %s', (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected)
  })

  it.each(PATHS)('parses paths, lambdas and $count: %s', (input, expected) => {
    expect(show(parseFilter(input))).toBe(expected)
  })

  it('keeps positions: a binary node points at its operator, a member at its first segment', () => {
    const tree = parseFilter("Name eq 'x' and Customer/Name ne 'y'") as BinarySyntax
    expect(tree.position).toBe(12)
    expect((tree.left as BinarySyntax).position).toBe(5)
    expect((tree.right as BinarySyntax).left.position).toBe(16)
    expect((tree.right as BinarySyntax).right.position).toBe(33)
  })

  it('gives a lambda its collection, variable and predicate with positions', () => {
    const lambda = parseFilter('  Lines/any(l:l/Quantity gt 8)') as LambdaSyntax
    expect(lambda).toMatchObject({ kind: 'lambda', op: 'any', variable: 'l', position: 2 })
    expect(lambda.collection).toEqual({ kind: 'member', path: ['Lines'], position: 2 })
    expect(lambda.predicate?.position).toBe(25)
  })

  it('lower-cases function names but keeps member names as written', () => {
    expect(parseFilter('ToUpper(Name)')).toMatchObject({ kind: 'call', name: 'toupper', args: [{ path: ['Name'] }] })
  })

  it('names the option it was given in errors', () => {
    expect(errorOf(() => parseFilter('Name eq', '$expand')).message).toMatch(/^Invalid \$expand:/)
  })
})

const MALFORMED: [string, string][] = [
  ['', 'an expression expected, found end of input at position 0'],
  ['Name eq', 'an expression expected, found end of input at position 7'],
  ["Name eq 'x' and", 'an expression expected, found end of input at position 15'],
  ["(Name eq 'x'", "an operator or ')' expected, found end of input at position 12 in '(Name eq 'x''"],
  ["Name eq 'x')", "an operator or end of input expected, found ')' at position 11"],
  ["Name eqq 'x'", "unknown operator 'eqq'; did you mean 'eq'? at position 5"],
  ["Name equals 'x'", "an operator or end of input expected, found 'equals' at position 5"],
  ["Name == 'x'", "an operator or end of input expected, found '=' at position 5"],
  ["Name eq 'x' annd Total gt 1", "unknown operator 'annd'; did you mean 'and'? at position 12"],
  ["contain(Name,'x')", "unknown function 'contain'; did you mean 'contains'? at position 0"],
  ['frobnicate(1)', "unknown function 'frobnicate' at position 0"],
  ["Sales.Fn(1) eq 1", "unknown function 'Sales.Fn' at position 0"],
  ['contains(Name)', 'contains takes 2 arguments, not 1 at position 0'],
  ['substring(Name)', 'substring takes 2 or 3 arguments, not 1'],
  ['length(a,b)', 'length takes 1 argument, not 2'],
  ['now(1)', 'now takes 0 arguments, not 1'],
  ["contains(Name,'x'", "an operator or ',' or ')' expected, found end of input at position 17"],
  ["contains(Name 'x')", "an operator or ',' or ')' expected, found ''x'' at position 14"],
  ['contains(,Name)', "an expression expected, found ',' at position 9"],
  ['cast(Price Edm.Int32)', "an operator or ',' and a type name expected, found 'Edm.Int32'"],
  ['cast(Price, 5)', "a type name expected, found '5' at position 12"],
  ['cast(Price,Collection(Edm.String)', "')' expected, found end of input"],
  ['Lines/any(l:)', "an expression expected, found ')' at position 12"],
  ['Lines/any(l l/Quantity gt 1)', "':' after the lambda variable expected, found 'l' at position 12"],
  ["Lines/any('l':x)", "a lambda variable name expected, found ''l'' at position 10"],
  ['Lines/any($it:x)', "a lambda variable name expected, found '$it'"],
  ['Lines/all()', 'all needs a lambda expression, as in Lines/all(l:l/Quantity gt 1) at position 6'],
  ['Lines/any(l:l/Quantity gt 1', "an operator or ')' expected, found end of input"],
  ['any(l:l eq 1)', "'any' must follow a collection path, as in Lines/any(l:l/Quantity gt 1) at position 0"],
  ['$count gt 1', "'$count' must follow a collection path, as in Lines/$count at position 0"],
  ['Lines/$count($top=1) gt 1', "$filter expected, found '$top' at position 13"],
  ['Lines/$count($filter=a eq 1;$filter=a eq 2) gt 1', '$filter is given twice at position 28'],
  ['Lines/$count($filter=a eq 1 gt 1', "an operator or ';' or ')' expected, found end of input"],
  ["Customer/ 'x'", "a property name after '/' expected, found ''x'' at position 10"],
  ['Customer/', "a property name after '/' expected, found end of input"],
  ["Name in 'a','b'", "an operator or end of input expected, found ',' at position 11"],
  ['Name in (Other)', "a literal (a list holds only literals and parameter aliases) expected, found 'Other' at position 9"],
  ["Name in ('a' 'b')", "',' or ')' expected, found ''b'' at position 13"],
  ["Name in ('a',", 'a literal (a list holds only literals and parameter aliases) expected, found end of input'],
  ['(Name, 1)', 'a list may hold only literals and parameter aliases at position 1'],
  ['$foo eq 1', "'$foo' is not allowed here at position 0"],
  ['Customer/$it eq 1', "'$it' is not allowed here at position 9"],
  ["Name eq 'x' and (", 'an expression expected, found end of input at position 17'],
  ['not', 'an expression expected, found end of input at position 3'],
  ['-', 'an expression expected, found end of input at position 1'],
  ['Name eq Sales.*', "unexpected '*' at position 14"],
  ["Name eq 'x' & Total gt 1", "unexpected character '&' at position 12"],
  ['Name eq 1 2', "an operator or end of input expected, found '2' at position 10"],
  ['Name eq .5', "unexpected character '.' at position 8"],
]

describe('parseFilter rejects malformed expressions', () => {
  it.each(MALFORMED)('rejects %s', (input, message) => {
    const error = errorOf(() => parseFilter(input))
    expect(error.code).toBe('InvalidQuery')
    expect(error.status).toBe(400)
    expect(error.target).toBe('$filter')
    expect(error.message).toContain(message)
    expect(error.message).toContain(`in '${input}'`)
  })

  it('words the message like odata.net: option, problem, position, text', () => {
    expect(errorOf(() => parseFilter("(Name eq 'x'")).message).toBe(
      "Invalid $filter: an operator or ')' expected, found end of input at position 12 in '(Name eq 'x''.",
    )
  })

  it.each([
    ['Customer/Orders(1)/Total gt 1', 'a function call or key predicate inside a path'],
    ['$root/Orders eq 1', '$root'],
    ['geo.distance(a,b) lt 5', "the function 'geo.distance'"],
    ['totalseconds(Span) gt 5', "the function 'totalseconds'"],
    ['case(a:1,true:2) eq 1', "the function 'case'"],
    ['Name eq @p/x', 'a path after a parameter alias'],
    ['Lines/$count($search=blue) gt 1', '$search'],
  ])('answers valid but unimplemented OData %s with 501 NotImplemented', (input, what) => {
    const error = errorOf(() => parseFilter(input))
    expect(error.code).toBe('NotImplemented')
    expect(error.status).toBe(501)
    expect(error.message).toContain(`${what} is not supported at position`)
  })
})

describe('parseFilter guards against pathological input', () => {
  it('rejects nesting deeper than 100 parentheses with QueryLimitExceeded', () => {
    const error = errorOf(() => parseFilter(`${'('.repeat(150)}a${')'.repeat(150)}`))
    expect(error.code).toBe('QueryLimitExceeded')
    expect(error.status).toBe(400)
    expect(error.message).toMatch(/nested deeper than 100 levels \(parentheses, calls, lambdas, unary operators; the parser's nesting limit\) at position \d+ in '…?\(+/)
  })

  it('accepts 90 levels of parentheses', () => {
    expect(show(parseFilter(`${'('.repeat(90)}a${')'.repeat(90)}`))).toBe('a')
  })

  it('rejects a chain of not deeper than 100', () => {
    expect(errorOf(() => parseFilter(`${'not '.repeat(120)}a`)).code).toBe('QueryLimitExceeded')
  })

  it('reads a chain of 3000 or without recursion: chains are bounded by MaxNodeCount, not nesting', () => {
    const chain = Array.from({ length: 3000 }, (_, i) => `a eq ${i}`).join(' or ')
    const tree = parseFilter(chain)
    expect(tree).toMatchObject({ kind: 'binary', op: 'or', right: { op: 'eq', right: { value: 2999 } } })
    expect(countExpressionNodes(tree)).toBe(3000 * 3 + 2999)
  })

  it('still counts parentheses inside a chain as nesting', () => {
    expect(errorOf(() => parseFilter(`a eq 1 or ${'('.repeat(120)}a${')'.repeat(120)}`)).code).toBe('QueryLimitExceeded')
  })

  it('rejects deeply nested lambdas and calls', () => {
    expect(errorOf(() => parseFilter(`${'tolower('.repeat(120)}a${')'.repeat(120)}`)).code).toBe('QueryLimitExceeded')
    expect(errorOf(() => parseFilter(`${'a/any(x:'.repeat(120)}x${')'.repeat(120)}`)).code).toBe('QueryLimitExceeded')
  })

  it('quotes only a window of a long text in the message, keeping the absolute position', () => {
    const text = `${"Name eq 'x' and ".repeat(40)}Name eq`
    const error = errorOf(() => parseFilter(text))
    expect(error.message).toContain(`at position ${text.length} in '…`)
    expect(error.message.length).toBeLessThan(300)
  })

  it('reads a long string literal without trouble', () => {
    const long = 'x'.repeat(20_000)
    expect(parseFilter(`Name eq '${long}'`)).toMatchObject({ right: { value: long } })
  })
})
