// Malformed and illegal queries: each must answer its status (400 unless said otherwise) with
// an OData error whose code is stable and whose message names the problem: the option, the
// position or the offending token, the property and what exists instead. Never a 500.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { data } from './cases.ts'
import { startQueryServer, type QueryServer } from './query-server.ts'

const ada = data.employees[0]

type Code = 'InvalidQuery' | 'QueryLimitExceeded' | 'NotFound' | 'NotImplemented'

/** [request as written (spaces become %20), code, fragments the message must contain, status]. */
type ErrorCase = readonly [string, Code, readonly string[], number?]

const q = 'InvalidQuery'
const limit = 'QueryLimitExceeded'

const names: ErrorCase[] = [
  ["Employees?$filter=Nme eq 'x'", q, ["Employees has no property 'Nme'", "did you mean 'Name'?"]],
  ["Employees?$filter=Manager/Nme eq 'x'", q, ["no property 'Nme'", "did you mean 'Name'?"]],
  ['Employees?$filter=Manager/Manager/Salry gt 1', q, ["no property 'Salry'", "did you mean 'Salary'?"]],
  ['Employees?$filter=Reports/any(r:r/Nme gt 1)', q, ["no property 'Nme'", "'Name'"]],
  ['Employees?$filter=Reports/any(r:x/Age gt 1)', q, ["no property 'x'"]],
  ['Employees?$filter=Reports/$count($filter=Nme eq 1) gt 1', q, ["no property 'Nme'"]],
  ['Employees?$filter=name eq 1', q, ["no property 'name'", "did you mean 'Name'?"]],
  ['Employees?$select=Nme', q, ["no property 'Nme'", "'Name'"]],
  ['Employees?$orderby=Nme', q, ["no property 'Nme'", "'Name'"]],
  ['Employees?$expand=Mangr', q, ["no property 'Mangr'", "did you mean 'Manager'?"]],
  ['Employees?$expand=Reports($filter=Nme eq 1)', q, ["no property 'Nme'"]],
  ['Employees?$expand=Reports($orderby=Nme)', q, ["no property 'Nme'"]],
  ['Employees?$expand=Reports($select=Nme)', q, ["no property 'Nme'"]],
  ['Employees?$apply=groupby((Nme))', q, ["no property 'Nme'", "'Name'"]],
  ['Employees?$apply=groupby((Manager/Nme))', q, ["no property 'Nme'"]],
  ['Orders?$filter=Customer/Countyr eq 1', q, ["Customers has no property 'Countyr'", "did you mean 'Country'?"]],
  ['Flights?$filter=Form/Code eq 1', q, ["Flights has no property 'Form'", "did you mean 'From'?"]],
]

const virtuals: ErrorCase[] = [
  ["Employees?$filter=DisplayName eq 'x'", q, ['Employees.DisplayName is not persisted', '$filter']],
  ['Employees?$orderby=DisplayName', q, ['Employees.DisplayName is not persisted', '$orderby']],
  ['Employees?$apply=groupby((DisplayName))', q, ['Employees.DisplayName is not persisted', '$apply']],
  ['Employees?$apply=aggregate(DisplayName with max as M)', q, ['DisplayName is not persisted', '$apply']],
  ["Employees?$filter=Manager/DisplayName eq 'x'", q, ['DisplayName is not persisted']],
  ["Employees?$filter=Reports/any(r:r/DisplayName eq 'x')", q, ['DisplayName is not persisted']],
  ["Employees?$expand=Reports($filter=DisplayName eq 'x')", q, ['DisplayName is not persisted']],
  ["Employees?$filter=contains(DisplayName,'x')", q, ['DisplayName is not persisted']],
]

const types: ErrorCase[] = [
  ["Employees?$filter=Age eq 'x'", q, ['"x" is not a valid Edm.Int32 value']],
  ['Employees?$filter=Name eq 5', q, ['cannot be compared with a string', "quote it: '5'"]],
  ['Employees?$filter=Active gt true', q, ["'gt' cannot compare booleans"]],
  ["Employees?$filter=HireDate eq 'yesterday'", q, ['"yesterday" is not a valid Edm.Date value']],
  ["Employees?$filter=Age add 'x' gt 1", q, ["'add' needs numbers, not an Edm.String"]],
  ['Employees?$filter=Name add 1 eq 2', q, ["'add' needs numbers"]],
  ['Employees?$filter=HireDate add 1 gt 2', q, ["'add' cannot take an Edm.Date and an Edm.Int32"]],
  ['Employees?$filter=Age', q, ['$filter needs a condition', 'not an Edm.Int32 value']],
  ['Employees?$filter=Name', q, ['$filter needs a condition', 'not an Edm.String value']],
  ['Employees?$expand=Reports($filter=Age)', q, ['$filter needs a condition']],
  ['Employees?$filter=Age and Active', q, ["'and' needs an Edm.Boolean operand, not an Edm.Int32"]],
  ['Employees?$filter=not Age', q, ["'not' needs an Edm.Boolean operand, not an Edm.Int32"]],
  ["Employees?$filter=-Name eq 'x'", q, ["'-' needs a number or a duration, not an Edm.String"]],
  ['Employees?$filter=Age gt 2024-01-01', q, ['is not a valid Edm.Int32 value']],
  ['Employees?$filter=LastLogin gt 5', q, ['5 is not a valid Edm.DateTimeOffset value']],
  ['Employees?$filter=StartTime gt 2024-01-01', q, ['is not a valid Edm.TimeOfDay value']],
  ["Employees?$filter=Guid eq 'not-a-guid'", q, ['"not-a-guid" is not a valid Edm.Guid value']],
  ["Employees?$filter=Manager eq 'x'", q, ['is not a valid Edm.Guid value']],
  ['Employees?$filter=Age in 5', q, ["'in' needs a list in parentheses"]],
  ["Employees?$filter=Age in ('a','b')", q, ['"a" is not a valid Edm.Int32 value']],
  ["Employees?$filter=Level eq 'Expert'", q, ["'Expert' is not a value of Employees.Level", 'Junior, Senior, Lead, Principal']],
  ["Employees?$filter=Level has 'Expert'", q, ["'Expert' is not a value of Employees.Level"]],
  ["Employees?$filter=Level in ('Junior','Seniour')", q, ["'Seniour' is not a value", "did you mean 'Senior'?"]],
  ["Employees?$filter=Level eq entityctl.Wrong'Senior'", q, ["entityctl.Wrong'Senior'", 'entityctl.EmployeeLevel']],
  ["Employees?$filter=Name eq entityctl.EmployeeLevel'Senior'", q, ["entityctl.EmployeeLevel'Senior'", 'Employees.Name']],
  ["Employees?$filter=Name has 'x'", q, ["'has' tests a member of an enumeration property"]],
  ["Employees?$filter=Name eq duration'P1D'", q, ["duration'P1D' cannot be compared with an Edm.String"]],
  ["Employees?$filter=Name eq binary'AAE='", q, ['Binary literals are not supported']],
  ['Employees?$orderby=Age gt 1', q, ['$orderby needs values to sort by']],
  ['Employees?$orderby=Manager', q, ['Employees.Manager is a navigation property', 'Manager/Title']],
  ['Employees?$filter=Age/Name eq 1', q, ['Employees.Age is not a navigation property', "'Age/Name'"]],
  ['Orders?$filter=Lines/Quantity gt 1', q, ['Orders.Lines is a collection', 'Lines/any(...)']],
]

const syntax: ErrorCase[] = [
  ['Employees?$filter=Age gt', q, ['Invalid $filter', 'an expression expected, found end of input', 'position 6']],
  ['Employees?$filter=(Age gt 5', q, ['Invalid $filter', "')' expected", 'position 9']],
  ['Employees?$filter=Age gt 5)', q, ['Invalid $filter', "found ')'", 'position 8']],
  ['Employees?$filter=((Age gt 5)', q, ["')' expected", 'position 11']],
  ['Employees?$filter=Age gtt 5', q, ["unknown operator 'gtt'", "did you mean 'gt'?", 'position 4']],
  ['Employees?$filter=Age eq 5 annd Active', q, ["unknown operator 'annd'", "did you mean 'and'?", 'position 9']],
  ["Employees?$filter=Name eq 'unterminated", q, ['unterminated string literal', 'position 8']],
  ['Employees?$filter=Name eq "x"', q, ["unexpected '\"'", 'single quotes', 'position 8']],
  ['Employees?$filter=Age eq 1.2.3', q, ["invalid number '1.2.'", 'position 7']],
  ['Employees?$filter=HireDate eq 2024-13-01', q, ["invalid date '2024-13-01'", 'position 12']],
  ['Employees?$filter=HireDate eq 2024-02-30', q, ["invalid date '2024-02-30'"]],
  ['Employees?$filter=StartTime eq 25:00:00', q, ["invalid time '25:00'", 'position 13']],
  ['Employees?$filter=LastLogin eq 2024-01-01T25:00:00Z', q, ["invalid time '25:00'"]],
  ["Employees?$filter=containz(Name,'x')", q, ["unknown function 'containz'", "did you mean 'contains'?", 'position 0']],
  ['Employees?$filter=contains(Name)', q, ['contains takes 2 arguments, not 1']],
  ["Employees?$filter=contains(Name,'a','b')", q, ['contains takes 2 arguments, not 3']],
  ['Employees?$filter=substring(Name)', q, ['substring takes 2 or 3 arguments, not 1']],
  ['Employees?$filter=now(1) eq 1', q, ['now takes 0 arguments, not 1']],
  ['Employees?$filter=length(Name,1) eq 1', q, ['length takes 1 argument, not 2']],
  ["Employees?$filter=Name+eq+'x'", q, ["unexpected '+'", 'encode spaces as %20']],
  ['Employees?$filter=Age gt %ZZ', q, ["malformed percent-encoding '%ZZ'"]],
  ['Employees?$filter=Reports/all()', q, ['all needs a lambda expression']],
  ['Employees?$filter=$count gt 1', q, ["'$count' must follow a collection path"]],
  ['Employees?$filter=Age in (1,Age)', q, ['a list holds only literals', "found 'Age'"]],
  ['Employees?$orderby=Name dsc', q, ["unknown operator 'dsc'", "did you mean 'desc'?"]],
  ['Employees?$orderby=Name asc desc', q, ["found 'desc'", 'position 9']],
  ['Employees?$orderby=Name,', q, ['Invalid $orderby', 'found end of input']],
  ['Employees?$select=Name,', q, ['Invalid $select', 'a property name or * expected']],
  ['Employees?$select=,Name', q, ['Invalid $select', "found ','", 'position 0']],
  ['Employees?$expand=Reports(', q, ['Invalid $expand', 'a query option such as $filter or $select expected']],
  ['Employees?$expand=Reports($top=1', q, ['Invalid $expand', "';' or ')' expected"]],
  ['Employees?$expand=Reports($foo=1)', q, ["unknown expand option '$foo'"]],
  ['Employees?$expand=Reports($top=1;$top=2)', q, ['$top is given twice', 'position 15']],
  ['Employees?$expand=Reports($top=x)', q, ['a non-negative integer for $top expected', "found 'x'"]],
  ['Employees?$expand=Reports($levels=0)', q, ['$levels must be at least 1']],
  ['Employees?$apply=aggregate(Age with summ as S)', q, ["unknown aggregation method 'summ'", "did you mean 'sum'?"]],
  ['Employees?$apply=aggregate(Age with sum)', q, ["'as' and an alias expected", "found ')'"]],
  ['Employees?$apply=filtr(Age gt 1)', q, ["unknown transformation 'filtr'", "did you mean 'filter'?"]],
  ['Employees?$apply=groupby(Level)', q, ["'(' and the grouping properties", "found 'Level'"]],
]

const options: ErrorCase[] = [
  ['Employees?$filter=', q, ['$filter has no value']],
  ['Employees?$filter=Age gt 1&$filter=Age lt 5', q, ['$filter is given more than once']],
  ['Employees?$filter=Age gt 1&filter=Age lt 5', q, ['$filter is given more than once']],
  ['Employees?$top=1&$TOP=2', q, ['$top is given more than once']],
  ['Employees?$top=-1', q, ['Invalid $top', 'a non-negative integer expected', "found '-1'"]],
  ['Employees?$top=abc', q, ['Invalid $top', "found 'abc'"]],
  ['Employees?$top=1.5', q, ['Invalid $top', "found '1.5'"]],
  ['Employees?$top=99999999999999999999', q, ['Invalid $top', 'is too large']],
  ['Employees?$skip=-1', q, ['Invalid $skip', "found '-1'"]],
  ['Employees?$skip=x', q, ['Invalid $skip', "found 'x'"]],
  ['Employees?$count=yes', q, ['Invalid $count', 'true or false expected', "found 'yes'"]],
  ['Employees?$count=1', q, ['Invalid $count', "found '1'"]],
  ['Employees?$count=', q, ['$count has no value']],
  ['Employees?$foo=1', q, ["unknown system query option '$foo'"]],
  ['Employees?$fliter=Age gt 1', q, ["unknown system query option '$fliter'", "did you mean '$filter'?"]],
  ['Employees?$levels=2', q, ['$levels is only allowed inside $expand']],
  ['Employees?$skiptoken=abc', q, ["$skiptoken 'abc' is not one this service issued"]],
  // Date and duration arithmetic takes the operand types URL Conventions 4.01 §5.1.1.2 lists, no other.
  ["Employees?$filter=Name add duration'P1D' eq 'x'", q, ["'add' cannot take an Edm.String and an Edm.Duration", 'Edm.Date add Edm.Duration (Edm.Date)']],
  ['Employees?$filter=HireDate add 5 eq HireDate', q, ["'add' cannot take an Edm.Date and an Edm.Int32"]],
  ["Employees?$filter=duration'P1D' add HireDate eq HireDate", q, ["'add' cannot take an Edm.Duration and an Edm.Date"]],
  ['Employees?$filter=HireDate sub LastLogin lt LastLogin sub LastLogin', q, ["'sub' cannot take an Edm.Date and an Edm.DateTimeOffset"]],
  ["Employees?$compute=duration'P1D' mul 2 as D", q, ["'mul' takes numbers, not an Edm.Duration and an Edm.Int32", "only add, sub and '-'"]],
  ["Employees?$filter=LastLogin sub LastLogin div 2 eq duration'PT0S'", q, ["'div' takes numbers"]],
  ["Employees?$filter=HireDate add 'P1Y' eq HireDate", q, ["duration'P1Y' is not a duration", 'no years or months']],
  ["Employees?$filter=LastLogin add duration'P1M' gt now()", q, ["invalid duration 'P1M'", 'no years or months']],
  ["Employees?$filter=LastLogin add duration'P1234567890D' gt now()", q, ["duration'P1234567890D' is out of range"]],
  ["Employees?$filter=HireDate eq duration'P1D'", q, ["duration'P1D' cannot be compared with an Edm.Date"]],
  ["Employees?$filter=LastLogin sub LastLogin eq 2024-01-01", q, ['"2024-01-01" is not a valid Edm.Duration value']],
  ['Employees?$orderby=-HireDate', q, ["'-' needs a number or a duration, not an Edm.Date"]],
  ['Employees?$apply=compute(LastLogin sub LastLogin as D)/aggregate(D with sum as S)', q, ['sum needs a number, not an Edm.Duration']],
  ["Employees?$compute=cast(duration'P1D',Edm.Date) as D", q, ['a duration value cannot be cast to Edm.Date']],
  // An alias given no value is null (OData 4.01 Part 1, Parameter Aliases), where null is refused.
  ['Employees?$orderby=@x', q, ['Parameter alias @x has no value in the query, so it is null']],
  ['Employees?$compute=@x as X', q, ['Parameter alias @x has no value in the query, so it is null']],
  ['Employees?$filter=Level in @l', q, ["'in' needs a list", 'Parameter alias @l has no value in the query, so it is null']],
  ['Employees?$filter=Age gt @x&@x=', q, ['@x has no value']],
  ["Employees?$filter=Age gt @x&@x='a'", q, ['"a" is not a valid Edm.Int32 value']],
  ['Employees?$filter=Age eq @a&@a=@a', q, ['Parameter alias @a has another alias']],
  ['Employees?$filter=Level in @l&@l=5', q, ["'in' needs a list in parentheses"]],
  ['Employees?$select=Manager/Nme', q, ["no property 'Nme'", "did you mean 'Name'?"]],
  ['Employees?$select=Age/Name', q, ['Employees.Age is not a navigation property', "'Age/Name'"]],
  ['Employees?$expand=Name', q, ['Employees.Name is not a navigation property']],
  ['Employees?$expand=Manager($filter=Age gt 1)', q, ['Manager is a single entity', 'apply to collections only']],
  ['Employees?$expand=Manager($top=1)', q, ['Manager is a single entity']],
  ['Employees?$expand=Manager($orderby=Name)', q, ['Manager is a single entity']],
  ['Employees?$expand=Manager($count=true)', q, ['Manager is a single entity']],
  ['Employees?$expand=Department($levels=2)', q, ['$levels needs a recursive navigation', 'Employees.Department leads to Departments']],
  ['Employees?$expand=Reports/Reports', q, ['nest it instead', '$expand=Reports($expand=Reports)']],
  ['Employees?$expand=Manager,Manager', q, ['Employees.Manager is expanded twice']],
  ['Employees?$filter=Name/any(x:x eq 1)', q, ['Employees.Name is not a collection']],
  ['Employees?$filter=Manager/any(m:m/Age gt 1)', q, ['Employees.Manager is not a collection']],
  ['Employees?$filter=Reports/any(r:r/Age)', q, ["'any' needs an Edm.Boolean operand, not an Edm.Int32"]],
  ['Employees?$filter=Manager/$count gt 1', q, ['Employees.Manager is not a collection']],
  ['Employees?$filter=Reports eq null', q, ['Employees.Reports is a collection', 'Reports/any(...)']],
  ['Employees?$filter=year(StartTime) eq 1', q, ['argument 1 of year() must be an Edm.Date or Edm.DateTimeOffset, not an Edm.TimeOfDay']],
  ['Employees?$filter=hour(HireDate) eq 1', q, ['argument 1 of hour() must be an Edm.DateTimeOffset or Edm.TimeOfDay, not an Edm.Date']],
  ['Employees?$filter=date(StartTime) eq 2024-01-01', q, ['argument 1 of date() must be an Edm.DateTimeOffset']],
  ["Employees?$filter=contains(Age,'1')", q, ['argument 1 of contains() must be an Edm.String, not an Edm.Int32']],
  ['Employees?$filter=round(Name) eq 1', q, ['argument 1 of round() must be an Edm.Int32 or Edm.Decimal or Edm.Double, not an Edm.String']],
  ["Employees?$filter=substring(Name,'a') eq 'x'", q, ['"a" is not a valid Edm.Int32 value']],
  ["Employees?$filter=matchesPattern(Name,'(')", q, ["matchesPattern() cannot use the pattern '('", '( is not closed']],
  ["Employees?$filter=matchesPattern(Name,'%5Cp{L}')", q, ['\\p is not accepted at position 2']],
  ["Employees?$filter=matchesPattern(Name,'[[:alph:]]')", q, ['[:alph:] is no class']],
  ["Employees?$filter=matchesPattern(Name,'a{300}')", q, ['a bound is at most 255']],
  ["Employees?$filter=matchesPattern(Name,'(?<n>a)')", q, ["'(?<' is not accepted"]],
  ["Employees?$filter=matchesPattern(Name,'(a)%5C1')", q, ['\\1 is not accepted']],
  ["Employees?$filter=matchesPattern(Name,'[z-a]')", q, ['a range must go upwards']],
  ["Employees?$filter=matchesPattern(Name,'a**')", q, ["'*' has nothing to repeat"]],
  ['Employees?$filter=cast(Age,Edm.Foo) eq 1', q, ['cast() supports primitive types', 'not Edm.Foo']],
  ['Employees?$filter=isof(entityctl.Employee)', q, ['isof() supports primitive types', 'not entityctl.Employee']],
  ["Employees?$filter=cast(Edm.String) eq 'x'", q, ['cast() of the entity itself is not supported']],
  ['Employees?$filter=cast(Age,Edm.Date) eq 2024-01-01', q, ['a int value cannot be cast to Edm.Date']],
  ['Employees?$filter=cast(Guid,Edm.Decimal) eq 1', q, ['a guid value cannot be cast to Edm.Decimal']],
  ['Employees?$filter=cast(StartTime,Edm.DateTimeOffset) eq null', q, ['a timeOfDay value cannot be cast to Edm.DateTimeOffset']],
  ['Employees?$orderby=null', q, ['In $orderby, null alone has no type']],
  ['Employees?$compute=null as Z', q, ['null alone has no type']],
  ['Employees?$apply=compute(null as Z)', q, ['null alone has no type']],
  ['Employees?$filter=round(null)', q, ['$filter needs a condition', 'not an Edm.Decimal value']],
  ['Employees?$filter=floor(null)', q, ['$filter needs a condition']],
  [`Employees(${ada.Guid})?$filter=Age gt 1`, q, ['apply to collections, not to a single entity']],
  [`Employees(${ada.Guid})?$top=1`, q, ['apply to collections, not to a single entity']],
  ['Employees(1)', q, ["'1' is not a Guid", 'keys of Employees are Guids']],
  // A string literal is shown as written, quoted once.
  ["Employees('abc')", q, ["'abc' is not a Guid"]],
  ["Employees(Guid='abc')", q, ["'abc' is not a Guid"]],
  [`Employees(@key)?@key=${ada.Guid}`, 'NotImplemented', ['A parameter alias as a key (@key)', 'write the Guid: Employees(<Guid>)'], 501],
  ['Employees(abc)', q, ['Invalid resource path', "found 'abc'"]],
]

const applyErrors: ErrorCase[] = [
  ['Employees?$apply=aggregate(Name with sum as S)', q, ['sum needs a number, not an Edm.String']],
  ['Employees?$apply=aggregate(Age with sum as S, Age with max as S)', q, ["the alias 'S' is used twice"]],
  ['Employees?$apply=groupby((Level),aggregate(Age with sum as S))&$orderby=Age', q, ["'Age' is not available after the aggregation", 'available: Level, S']],
  ['Employees?$apply=groupby((Level),aggregate(Age with sum as S))&$filter=Age gt 1', q, ["'Age' is not available after the aggregation"]],
  ['Employees?$apply=groupby((Level),aggregate(Age with sum as S))/filter(Age gt 1)', q, ["'Age' is not available after the aggregation"]],
  ['Employees?$apply=groupby((Level),aggregate(Age with sum as S))&$select=Level', q, ['$select and $expand cannot be combined with $apply']],
  ['Employees?$apply=groupby((Level),aggregate(Age with sum as S))&$expand=Manager', q, ['cannot be combined with $apply']],
  ['Employees?$apply=filter(Age)', q, ['filter() needs a condition']],
  ['Employees?$apply=groupby((Level),filter(Age gt 1))', q, ['only aggregate() is supported inside groupby, not filter()']],
  ['Employees?$apply=groupby((Reports))', q, ['Employees.Reports is a collection']],
  ['Employees?$apply=aggregate(Reports with sum as S)', q, ['Employees.Reports is a collection']],
  ['Employees?$apply=compute(Age mul 2 as A)/aggregate(A with sum as S)/compute(S add 1 as T)', q, ['compute() after an aggregation is not supported']],
  ['Employees?$apply=groupby((Level),aggregate($count as N))/groupby((N),aggregate($count as M))', q, ['only one groupby or aggregate']],
  ['Orders?$apply=top(3)', q, ['top() before the aggregation is not supported']],
]

const limits: ErrorCase[] = [
  ['Employees?$top=501', limit, ['MaxTop is 500', 'asks for 501']],
  ['Employees?$expand=Reports($top=501)', limit, ['MaxTop is 500', 'asks for 501']],
  ['Employees?$apply=groupby((Level),aggregate($count as N))/top(501)', limit, ['MaxTop is 500', 'asks for 501']],
  ['Employees?$expand=Manager($levels=9)', limit, ['MaxExpansionDepth is 5', 'asks for 9']],
  ['Employees?$expand=Reports($expand=Reports($expand=Reports($expand=Reports($expand=Reports($expand=Reports)))))', limit, ['MaxExpansionDepth is 5', 'asks for 6']],
  [`Employees?$filter=${Array.from({ length: 34 }, (_, i) => `Age eq ${i}`).join(' or ')}`, limit, ['MaxNodeCount is 100', 'asks for 135']],
  [`Employees?$select=${Array.from({ length: 101 }, () => 'Name').join(',')}`, limit, ['MaxNodeCount is 100', 'asks for 101']],
  [`Employees?$filter=${'('.repeat(120)}Age gt 1${')'.repeat(120)}`, limit, ['nested deeper than 100 levels']],
]

const paths: ErrorCase[] = [
  ['Employeez', 'NotFound', ["No entity set 'Employeez'", "did you mean 'Employees'?"], 404],
  ['Nothing', 'NotFound', ["No entity set 'Nothing'"], 404],
  [`Employees(${ada.Guid})/Nope`, 'NotFound', ["Employees has no property, navigation property or method 'Nope'"], 404],
  [`Employees(${ada.Guid})/Name/Nope`, 'NotFound', ['only /$value may follow it'], 404],
  ['Employees?$search=foo', q, ['Employees has no searchable properties']],
  ['Employees?$compute=Age mul 2 as Name', q, ["'Name' is already a name of Employees"]],
  ['Employees?$filter=geo.distance(Name,Name) lt 1', 'NotImplemented', ["the function 'geo.distance' is not supported"], 501],
]

const CASES: ErrorCase[] = [...names, ...virtuals, ...types, ...syntax, ...options, ...applyErrors, ...limits, ...paths]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => {
  await server?.stop()
})

describe('malformed and illegal queries', () => {
  it('are at least 100, most of them 400', () => {
    expect(CASES.filter(([, , , status]) => (status ?? 400) === 400).length).toBeGreaterThanOrEqual(100)
  })

  it.each(CASES.map((c) => [c[0], c] as const))('%s', async (_, [request, code, fragments, status = 400]) => {
    const response = await server.get(request.replaceAll(' ', '%20'))
    expect(response.status, response.text).toBe(status)
    expect(response.body?.error?.code, response.text).toBe(code)
    for (const fragment of fragments) expect(response.body.error.message).toContain(fragment)
    expect(response.body.error.message).not.toMatch(/syntax error|relation|column|SQLSTATE/i)
  })

  it.each([
    ['$filter', 'Age gt 1'],
    ['$orderby', 'Name'],
    ['$top', '1'],
    ['$skip', '1'],
    ['$apply', 'aggregate($count as N)'],
    ['$count', 'true'],
    ['$count', 'false'],
    ['$search', 'Ada'],
    ['$skiptoken', '1'],
  ])('%s on one entity is 400 with the option as its target', async (option, value) => {
    const response = await server.get(`Employees(${ada.Guid})?${option}=${encodeURIComponent(value)}`)
    expect(response.status, response.text).toBe(400)
    expect(response.body.error.code).toBe('InvalidQuery')
    expect(response.body.error.target).toBe(option)
    expect(response.body.error.message).toMatch(new RegExp(`^\\${option}: .*not to a single entity`))
  })

  // A property of every type, cast to every type: each pair is a value (null when it does not
  // convert) or a 400 from the binder, never a database error.
  const CAST_SOURCES = ['Name', 'Age', 'Salary', 'Rating', 'Active', 'HireDate', 'LastLogin', 'StartTime', 'Guid', 'MentorGuid', "'abc'", "'2024-02-30'", 'null', 'LastLogin sub LastLogin', "'-p1dt2h'", "'P1M'", "'PT'", "'P9999999999D'"]
  const CAST_TARGETS = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double', 'Edm.Boolean', 'Edm.Date', 'Edm.DateTimeOffset', 'Edm.TimeOfDay', 'Edm.Guid', 'Edm.Duration']
  it.each(CAST_SOURCES.flatMap((source) => CAST_TARGETS.map((type) => [source, type])))('cast(%s,%s) is a value or a 400', async (source, type) => {
    const response = await server.get(`Employees/$count?$filter=cast(${source},${type}) eq null`.replaceAll(' ', '%20'))
    expect([200, 400], response.text).toContain(response.status)
    if (response.status === 400) expect(response.body.error.message).toContain(`cannot be cast to ${type}`)
  })
})
