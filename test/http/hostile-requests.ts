// Structured but hostile HTTP requests for the demo model (plugins/sales.ts), as fast-check
// arbitraries: resource paths built from real and near-miss names, keys good and bad, query
// options from a grammar of OData expressions (every literal type, quotes, NULs, emoji, invalid
// percent-encodings, huge numbers, deep nesting, long or-chains), every method, the headers a
// client can get wrong and bodies of every shape. The fuzz test (hostile-requests.test.ts)
// sends them one by one; the benchmark's soak (test/bench/soak.ts) samples them as its hostile
// share. Nothing here knows what the answer should be beyond "a 4xx or 501 with an OData body".
//
// Each generator belongs to a named family. A family whose failures are another part of the
// work (issue #15, see the test) is kept out of the main run only through OPEN_FAMILIES in the
// test, never by filtering single inputs away.
import fc from 'fast-check'
import { SignJWT } from 'jose'

/** Keys of rows that exist, so paths reach real entities as well as missing ones. */
export interface HostileKeys {
  readonly customer: string
  readonly product: string
  readonly order: string
  readonly line: string
}

/** Authorization header values, by who sends them; `undefined` sends none. */
export type Credentials = Readonly<Record<CredentialName, string | undefined>>

export const CREDENTIAL_NAMES = [
  'admin', 'restricted', 'none', 'expired', 'wrongSignature', 'unknownTenant', 'otherTenantUser', 'wrongAudience',
] as const
export type CredentialName = (typeof CREDENTIAL_NAMES)[number]

export interface HostileContext {
  readonly keys: HostileKeys
  readonly credentials: Credentials
  /** An open workflow of the admin, so Workflow-Id headers sometimes name a real one. */
  readonly workflowId?: string
}

export interface HostileRequest {
  /** The generator it came from (see FAMILIES). */
  readonly family: Family
  readonly method: string
  /** The request target, sent byte for byte. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: Uint8Array
}

export const FAMILIES = [
  /** GET (or HEAD) of a path with query options from the expression grammar. */
  'query',
  /** Filters nested a hundred levels and more, and or/and chains of hundreds of terms (URL under 16 KB). */
  'deepExpression',
  /** A request target or header longer than Node's 16 KB head limit. */
  'overlongHead',
  /** Well-typed queries on real paths whose evaluation PostgreSQL may refuse: division by zero,
   *  overflow, bad regular expressions and casts, extreme dates, paging and aliases. */
  'sqlEdge',
  /** Writes to real entity sets and keys with the set's own properties at and past their limits. */
  'entityWrite',
  /** The demo plugin's methods (bound and static, read and modify) with parameters of every type. */
  'method',
  /** Requests inside a real workflow (Workflow-Id of one the admin opened, small indexes), commit and abort. */
  'workflow',
  /** String literals holding NUL characters (PostgreSQL refuses them in text). */
  'nulLiteral',
  /** Any method on any path with any headers and body. */
  'write',
  /** Write bodies whose strings hold NUL characters. */
  'nulBody',
  /** Bodies that are not JSON, nested thousands deep, or large strings within the body limit. */
  'oddBody',
  /** A Content-Encoding the body does not have (corrupt gzip, deflate, br). */
  'corruptEncoding',
  /** Sign-in, refresh, PATs, roles tree and workflow routes with hostile bodies and headers. */
  'systemRoute',
  /** $batch, JSON and multipart: parts of every kind, references, groups and dependencies gone wrong. */
  'batch',
  /** Links set and removed through `…/$ref` with hostile `@odata.id` values and paths. */
  'refWrite',
] as const
export type Family = (typeof FAMILIES)[number]

// ---------------------------------------------------------------------------------------------
// Encoding: the request target is sent as bytes; anything outside printable ASCII is
// percent-encoded from its UTF-8 bytes (a lone surrogate becomes U+FFFD, as a client would).

const SAFE = /[A-Za-z0-9\-._~!$'()*,;:@/]/

/** Percent-encodes what a URL cannot hold; `raw` leaves quotes, parens and the like as they are. */
function encode(text: string, raw: boolean): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte)
    const keep = byte > 0x20 && byte < 0x7f && (raw ? !'%&#+ '.includes(char) : SAFE.test(char))
    out += keep ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  return out
}

const BROKEN_ESCAPES = ['%', '%z', '%zz', '%E0%A4', '%C0%AF', '%FF', '%00', '%u0041', '%%', '%2', '%ED%A0%80'] as const

/** Inserts invalid percent-encodings at random places of an encoded text. */
const withBrokenEscapes = (encoded: string): fc.Arbitrary<string> =>
  fc.array(fc.tuple(fc.nat(), fc.constantFrom(...BROKEN_ESCAPES)), { minLength: 1, maxLength: 3 }).map((inserts) => {
    let text = encoded
    for (const [at, brokenEscape] of inserts) {
      const position = text.length === 0 ? 0 : at % (text.length + 1)
      text = text.slice(0, position) + brokenEscape + text.slice(position)
    }
    return text
  })

/** How a value goes into the URL: properly encoded, raw where a URL allows, or corrupted. */
const encodedValue = (text: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(encode(text, false)) },
    { weight: 3, arbitrary: fc.constant(encode(text, true)) },
    { weight: 1, arbitrary: withBrokenEscapes(encode(text, false)) },
  )

/** A key no row has, fixed so a counterexample replays exactly. */
const MISSING = '0193d7c4-0000-7000-8000-00000000dead'

// ---------------------------------------------------------------------------------------------
// Names: real ones of the demo model and the system, and near misses.

const SETS = ['Customers', 'Products', 'Orders', 'OrderLines', 'Customer', 'Order', 'Users', 'Roles', 'roles', 'Responsibilities', 'UserRoles', 'RoleResponsibilities'] as const
const NEAR_SETS = ['customers', 'Customerz', 'Order Lines', 'OrderLine s', '$metadata', '$batch', '$count', '$all', '$crossjoin(Customers,Orders)', '$entity', '', '.', '..', 'Orders/', 'Ørders', '🙂', 'Customers()', 'Customers(', 'auth', 'workflow', 'user/pats', 'roles/tree'] as const
const NAVIGATIONS = ['Orders', 'Lines', 'Customer', 'Product', 'Order', 'Parent', 'Children', 'Nope'] as const
const PROPERTIES = ['Name', 'Email', 'City', 'Country', 'CreditLimit', 'Title', 'Code', 'Category', 'Price', 'Number', 'OrderDate', 'Status', 'Total', 'Quantity', 'UnitPrice', 'LineTotal', 'Guid', 'Username', 'PasswordHash', 'Nope', 'name', 'TOTAL'] as const
const SEGMENTS = ['$value', '$count', '$ref', '$metadata', '$filter(Total gt 1)', '$each', 'Revenue()', 'Revenue', 'Close', 'Close()', 'OpenSince(before=2024-01-01)', 'OpenSince(before=x)', 'OpenSince()', 'Reprice', 'Reprice()', 'Default.Close', 'entityctl.Close', 'Nope()'] as const
const OPTION_NAMES = ['$filter', '$select', '$expand', '$orderby', '$top', '$skip', '$count', '$apply', '$search', '$compute', '$format', '$skiptoken', '$levels', '$id', '$schemaversion', '$deltatoken', '$index'] as const

const pathPrefix = fc.oneof(
  { weight: 12, arbitrary: fc.constant('/api/') },
  { weight: 1, arbitrary: fc.constantFrom('/API/', '/api//', '/api/./', '//api/', '/api/%2e%2e/', '/Api/', '/api', '/', '/api/%2F', '/apix/', '/api/;/') },
)

const keyOf = (keys: HostileKeys): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(keys.customer, keys.product, keys.order, keys.line) },
    { weight: 2, arbitrary: fc.uuid() },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "'abc'", '1', '-1', '99999999999999999999999999', `Guid=${keys.order}`, "Code='PERM'", 'Number=77', "Number='77'",
        '', '(', ')', 'null', `guid'${keys.customer}'`, `'${keys.customer}'`, keys.customer.toUpperCase(), keys.customer.slice(1),
        `${keys.customer},${keys.order}`, 'Guid=', '=', "''''", '1.5', 'true', '$it', '@k', 'Guid=null', `${keys.customer}%00`,
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  )

function resourcePath(keys: HostileKeys): fc.Arbitrary<string> {
  const set = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...SETS) }, { weight: 1, arbitrary: fc.constantFrom(...NEAR_SETS) })
  const keyPart = fc.oneof(
    { weight: 2, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: keyOf(keys).map((key) => `(${key})`) },
    { weight: 1, arbitrary: keyOf(keys).map((key) => `/${key}`) },
  )
  const segment = fc.oneof(fc.constantFrom(...NAVIGATIONS), fc.constantFrom(...PROPERTIES), fc.constantFrom(...SEGMENTS), keyOf(keys).map((key) => `(${key})`))
  return fc
    .tuple(pathPrefix, set, keyPart, fc.array(segment, { maxLength: 3 }))
    .chain(([prefix, name, key, segments]) => encodedValue([name + key, ...segments].join('/')).map((rest) => prefix + rest))
}

/** Paths that exist: a set, an entity, or a navigation from one. */
function validPath(keys: HostileKeys): fc.Arbitrary<string> {
  return fc.constantFrom(
    '/api/Customers', '/api/Products', '/api/Orders', '/api/OrderLines', `/api/Customers(${keys.customer})`, `/api/Products(${keys.product})`,
    `/api/Orders(${keys.order})`, `/api/OrderLines(${keys.line})`, `/api/Customers(${keys.customer})/Orders`, `/api/Orders(${keys.order})/Lines`,
    `/api/Orders(${keys.order})/Customer`, `/api/OrderLines(${keys.line})/Product`, '/api/Orders/$count', `/api/Customers/${keys.customer}`,
    '/api/Users', '/api/Roles',
  )
}

// ---------------------------------------------------------------------------------------------
// Expressions: a grammar of OData ($filter, $orderby, $apply, $compute) that is mostly valid
// in shape and often wrong in types, names or literals.

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`

const stringLiteral = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'grapheme', maxLength: 16 }).map(quote) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }).map((text) => quote(text.replaceAll('\u0000', ''))) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }).map((text) => `'${text}`) },
  { weight: 2, arbitrary: fc.constantFrom("'O''Brien'", "''", "''''", "'😀🇩🇪👩‍👩‍👧'", "'\\'", "'%'", "'_'", "'a''", "'\ud800'", "'\u202e'", "'steel'", "'DE'", "'Open'") },
)

const nulLiteral = fc.tuple(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 })).map(([a, b]) => quote(`${a}\u0000${b}`))

const numberLiteral = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc.double().map(String),
  fc.constantFrom(
    '99999999999999999999999999999', '1e309', '-1e-400', '0x10', '1_000', '.5', '5.', '1E+', 'INF', '-INF', 'NaN', '2147483648',
    '9223372036854775808', '-9223372036854775809', '12.345M', '1d', '1f', '1L', '-0', '1e-7', '79228162514264337593543950336',
  ),
)

const temporalLiteral = fc.constantFrom(
  '2024-01-01', '2024-13-45', '0000-00-00', '9999-12-31', '2024-02-30', '2024-02-30T25:61:61Z', '2024-01-01T00:00:00Z',
  '2024-01-01T00:00:00.123456789+14:00', '-2024-01-01', '12:30:00', '24:00:00', "duration'P1D'", "duration'garbage'",
  '275760-09-13T00:00:00Z', '1970-01-01T00:00:00-99:99',
)

const otherLiteral = fc.constantFrom(
  'true', 'false', 'null', 'TRUE', "binary'AAEC'", "binary'!!'", "geography'SRID=4326;POINT(1 2)'", "geometry'POINT(1 2)'",
  "Edm.String'x'", "entityctl.Status'Open'", '[1,2]', '["a"]', '{"a":1}', '@a', '$it', '$root', '$this', '$root/Customers',
)

const literal = (keys: HostileKeys) =>
  fc.oneof(
    { weight: 4, arbitrary: stringLiteral },
    { weight: 3, arbitrary: numberLiteral },
    { weight: 2, arbitrary: temporalLiteral },
    { weight: 2, arbitrary: otherLiteral },
    { weight: 1, arbitrary: fc.oneof(fc.uuid(), fc.constantFrom(keys.customer, keys.order)) },
  )

const PROPERTY_PATHS = [
  'Name', 'Total', 'Number', 'Status', 'OrderDate', 'Price', 'Quantity', 'Country', 'CreditLimit', 'Customer/Country',
  'Customer/Name', 'Order/Customer/Name', 'Lines/$count', 'Orders/$count', 'Nope', 'Customer/Nope', 'Guid', '$it/Name',
  'Title', 'Email', 'Lines', 'Customer', 'Lines/Quantity', 'Product/Price', 'Customer/Orders', 'Customer/Guid', 'l/Quantity',
] as const

const FUNCTIONS: readonly (readonly [string, number])[] = [
  ['contains', 2], ['startswith', 2], ['endswith', 2], ['length', 1], ['indexof', 2], ['substring', 2], ['substring', 3],
  ['tolower', 1], ['toupper', 1], ['trim', 1], ['concat', 2], ['matchesPattern', 2], ['year', 1], ['month', 1], ['day', 1],
  ['hour', 1], ['minute', 1], ['second', 1], ['fractionalseconds', 1], ['date', 1], ['time', 1], ['now', 0],
  ['totaloffsetminutes', 1], ['maxdatetime', 0], ['mindatetime', 0], ['round', 1], ['floor', 1], ['ceiling', 1],
  ['geo.distance', 2], ['geo.length', 1], ['isof', 1], ['unknownfn', 1], ['contains', 0], ['contains', 5],
]
const CASTS = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double', 'Edm.Date', 'Edm.Boolean', 'Edm.Guid', 'Edm.Foo', 'entityctl.Order', 'Edm.Geography'] as const
const COMPARISONS = ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'has', 'EQ', 'like', '=='] as const
const ARITHMETIC = ['add', 'sub', 'mul', 'div', 'divby', 'mod'] as const
const REGEXES = ["'('", "'['", "'a{99999}'", "'(a+)+$'", "'\\'", "'^steel'", "'[[:alpha:]]'", "'(?<n>a)'", "'\\\\1'"] as const

export function expression(keys: HostileKeys): fc.Arbitrary<string> {
  const atom = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...PROPERTY_PATHS) },
    { weight: 3, arbitrary: literal(keys) },
  )
  return fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      atom,
      fc.tuple(tie('expr'), fc.constantFrom(...COMPARISONS), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`),
      fc.tuple(tie('expr'), fc.constantFrom('and', 'or'), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`),
      fc.tuple(tie('expr'), fc.constantFrom(...ARITHMETIC), tie('expr')).map(([a, op, b]) => `${a} ${op} ${b}`),
      tie('expr').map((a) => `not ${a}`),
      tie('expr').map((a) => `-${a}`),
      tie('expr').map((a) => `(${a})`),
      fc.tuple(fc.constantFrom(...FUNCTIONS), fc.array(tie('expr'), { maxLength: 5 })).map(
        ([[name, arity], args]) => `${name}(${[...args, ...Array(Math.max(0, arity - args.length)).fill("'x'")].slice(0, Math.max(arity, args.length)).join(',')})`,
      ),
      fc.tuple(fc.constantFrom('Name', 'Customer/Country', 'Number'), fc.constantFrom(...REGEXES)).map(([path, re]) => `matchesPattern(${path},${re})`),
      fc.tuple(tie('expr'), fc.constantFrom(...CASTS)).map(([a, type]) => `cast(${a},${type})`),
      fc.tuple(fc.constantFrom('Lines', 'Orders', 'Customer', 'Nope', 'Lines/Product'), fc.constantFrom('any', 'all'), tie('expr')).map(
        ([nav, op, body]) => `${nav}/${op}(l:${body})`,
      ),
      fc.constantFrom('Lines/any()', 'Lines/any(l:)', 'Lines/any(:l/Quantity gt 1)', 'Lines/any(l:m/Quantity gt 1)', 'Lines/any(l:l/Lines/any(m:m/Quantity gt 1))'),
      fc.tuple(fc.constantFrom(...PROPERTY_PATHS), fc.array(literal(keys), { maxLength: 6 })).map(([path, items]) => `${path} in (${items.join(',')})`),
    ),
  })).expr
}

/** Nesting and chains far beyond what a person writes: the parser's depth guard and SQL's size. */
function deepExpression(keys: HostileKeys): fc.Arbitrary<string> {
  return fc.oneof(
    fc.integer({ min: 50, max: 2_000 }).map((n) => `${'('.repeat(n)}Total gt 1${')'.repeat(n)}`),
    fc.integer({ min: 50, max: 2_000 }).map((n) => `${'not '.repeat(n)}(Total gt 1)`),
    fc.integer({ min: 50, max: 2_000 }).map((n) => `${'-'.repeat(n)}Total gt 1`),
    fc.integer({ min: 50, max: 1_500 }).map((n) => `Total gt ${Array(n).fill('1').join(' add ')}`),
    fc.tuple(fc.integer({ min: 50, max: 500 }), fc.constantFrom('or', 'and')).map(([n, op]) =>
      Array.from({ length: n }, (_, i) => `Name eq '${i}'`).join(` ${op} `)),
    fc.integer({ min: 2, max: 40 }).map((n) => `${'Lines/any(l:l/Order/'.repeat(n)}Total gt 1${')'.repeat(n)}`),
    fc.integer({ min: 2, max: 60 }).map((n) => `${'concat('.repeat(n)}Name${",'x')".repeat(n)} eq 'x'`),
    fc.integer({ min: 10, max: 2_000 }).map((n) => `Name in (${Array.from({ length: n }, (_, i) => `'${i}'`).join(',')})`),
    expression(keys).map((text) => `${text}${')'.repeat(50)}`),
  )
}

/** Well-typed Orders filters at the edges of what PostgreSQL evaluates. */
const SQL_EDGE_FILTERS = [
  'Total div 0 gt 1', 'Number div 0 eq 1', 'Number mod 0 eq 1', 'Total divby 0 gt 1', 'Total mod 0 eq 0', 'Number divby 0 gt 1',
  'Number mul 2147483647 gt 1', 'Number mul Number mul Number mul Number mul Number mul Number gt 1', 'Number add 9223372036854775807 gt 1',
  'Number sub -9223372036854775807 sub 10 gt 1', 'Number eq 9223372036854775808', 'Number eq -2147483649', 'Number eq 99999999999999999999999999999',
  'Total eq 1e308', 'Total gt 1.7976931348623157e308', 'Total eq 0.00000000000000000000000000000000000001', 'Total mul 1e308 mul 1e308 gt 1',
  "Total eq 99999999999999999999999999999999999999.99", 'Total gt -1e-400', 'round(Total mul 1e300) gt 1', 'ceiling(Total div 3) eq 1',
  "matchesPattern(Title,'(')", "matchesPattern(Title,'[')", "matchesPattern(Title,'a{99999}')", "matchesPattern(Title,'(a+)+$')",
  "matchesPattern(Title,'\\')", "matchesPattern(Title,'*')", "matchesPattern(Title,'(?<n>a)')", "matchesPattern(Title,'[[:nope:]]')",
  "cast(Title,Edm.Int32) eq 1", "cast(Title,Edm.Decimal) gt 1", "cast(Title,Edm.Date) eq 2024-01-01", "cast(Status,Edm.Guid) eq 01a212a8-d75f-76ac-90d0-52af0aaf3a3a",
  "cast(Total,Edm.Int16) eq 1", "cast(Total,Edm.Byte) eq 1", "cast(Number mul 100000,Edm.Int16) eq 1", "cast(Title,Edm.Double) gt 1", "cast(Title,Edm.Boolean)",
  "cast(OrderDate,Edm.DateTimeOffset) gt 2024-01-01T00:00:00Z", "cast(Total,Edm.String) eq '1'", "cast(Title,Edm.DateTimeOffset) gt now()",
  "substring(Title,-1) eq 'a'", "substring(Title,1,-5) eq 'a'", "substring(Title,99999999999) eq ''", "substring(Title,2147483647,2147483647) eq ''",
  "indexof(Title,'') eq 0", "length(Title) div 0 eq 1", "contains(Title,'\\')", "contains(Title,'%')", "contains(Title,'_')", "startswith(Title,'\\%')",
  "endswith(Title,'[')", "contains(Title,'\u0001')", "tolower(Title) eq 'ß'", "concat(concat(Title,Title),Title) eq 'x'",
  'year(OrderDate) eq 99999999999', 'OrderDate eq 9999-12-31', 'OrderDate gt 0001-01-01', 'OrderDate lt 0000-01-01', 'OrderDate eq 2024-02-30',
  'OrderDate eq 294277-01-01', 'OrderDate ge 5874897-12-31', 'month(OrderDate) eq -1', 'day(OrderDate) div 0 eq 1',
  'OrderDate gt maxdatetime()', 'OrderDate lt mindatetime()', 'OrderDate le now()', 'date(now()) eq OrderDate', 'hour(now()) ge 0',
  'fractionalseconds(now()) lt 1', 'totaloffsetminutes(now()) eq 0', "OrderDate add duration'P99999999D' gt OrderDate",
  "OrderDate sub duration'PT1S' lt OrderDate", "now() sub OrderDate gt duration'P1D'",
  "Lines/any(l:l/Quantity div 0 gt 1)", "Lines/all(l:l/UnitPrice mul 1e308 gt 1)", 'Lines/$count div 0 eq 1', 'Lines/$count gt 2147483648',
  "Customer/CreditLimit div Total gt 1", "Customer/CreditLimit mul 1e300 gt 1", "Customer/Name in ('a','b')", "Status in ('Open','Nope')",
  "Status eq 'Open' and Total gt @a", "Total gt @a", "Number eq @a", "Title eq @a", "OrderDate eq @a",
] as const

/** Option values at the edges of paging and aliases. */
const SQL_EDGE_OPTIONS: readonly (readonly [string, string])[] = [
  ['$top', '2147483648'], ['$top', '9223372036854775807'], ['$top', '0'], ['$skip', '9223372036854775807'], ['$skip', '2147483648'],
  ['$skip', '99999999999999999999'], ['$orderby', 'Total div 0'], ['$orderby', 'cast(Title,Edm.Int32)'], ['$orderby', "matchesPattern(Title,'(')"],
  ['$count', 'true'], ['$select', 'Number,Total,Title'], ['$expand', 'Lines($top=2147483648)'], ['$expand', 'Lines($skip=9223372036854775807)'],
  ['$expand', 'Lines($filter=Quantity div 0 gt 1)'], ['$expand', 'Customer($select=Name)'], ['$expand', 'Lines($orderby=Quantity div 0)'],
  ['$apply', 'aggregate(Total with sum as S)/filter(S div 0 gt 1)'], ['$apply', 'compute(Number mul 99999999999 as X)/aggregate(X with sum as S)'],
  ['$apply', 'aggregate(Number with sum as S)'], ['$apply', 'groupby((Status),aggregate(Total with average as A))/filter(A div 0 gt 1)'],
  ['$apply', 'compute(Total div 0 as D)'], ['$apply', "filter(matchesPattern(Title,'('))"], ['$apply', 'top(2147483648)'], ['$apply', 'skip(-1)'],
  ['@a', '1e999'], ['@a', "'x'"], ['@a', 'null'], ['@a', '99999999999999999999'], ['@a', '@a'], ['@a', '@b'], ['@a', '2024-02-30'], ['@a', "'\u0000'"],
  ['$skiptoken', 'eyJrIjpbMV19'], ['$skiptoken', Buffer.from('{"k":["x"]}').toString('base64url')], ['$skiptoken', Buffer.from('[1,2,3]').toString('base64url')],
]

function sqlEdgeQuery(): fc.Arbitrary<string> {
  const filter = fc.array(fc.constantFrom(...SQL_EDGE_FILTERS), { minLength: 1, maxLength: 3 }).chain((parts) =>
    fc.constantFrom(' and ', ' or ').map((op) => parts.join(op)))
  const options = fc.array(fc.constantFrom(...SQL_EDGE_OPTIONS), { maxLength: 3 })
  return fc.tuple(fc.constantFrom('/api/Orders', '/api/Orders', `/api/Orders/$count`), fc.option(filter, { nil: undefined }), options).map(([path, text, more]) => {
    const pairs = [...(text === undefined ? [] : [['$filter', text] as const]), ...more]
    return `${path}?${pairs.map(([name, value]) => `${name}=${encode(value, false)}`).join('&')}`
  })
}

/** Each set's own properties, with values right, wrong and at the edge of their types. */
function entityWriteBody(keys: HostileKeys, set: string): fc.Arbitrary<Uint8Array> {
  const text = (max: number) => fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 12 }),
    fc.constantFrom('x'.repeat(max), 'x'.repeat(max + 1), '😀'.repeat(max), '', ' ', "O'Brien", '\\', '%_'),
    anyValue,
  )
  const decimal = fc.oneof(
    fc.constantFrom(0, -0, 0.005, 1.005, -1, 9999999999.99, 10000000000, 1e20, -1e20, 1e308, 5e-324, 123456789012.345, '12.5', '1e3', 'NaN', 'Infinity'),
    fc.double(),
    anyValue,
  )
  const integer = fc.oneof(
    fc.constantFrom(0, 1, 10, 11, -1, 2147483647, 2147483648, -2147483649, Number.MAX_SAFE_INTEGER + 2, 1.5, 1e21, '7', '0x10'),
    fc.integer(),
    anyValue,
  )
  const date = fc.oneof(
    fc.constantFrom('2024-01-01', '2024-02-30', '0000-01-01', '0001-01-01', '9999-12-31', '10000-01-01', '-0001-01-01', '2024-01-01T10:00:00Z', '294277-01-01', '', 'today'),
    anyValue,
  )
  const bind = (entitySet: string, key: string) => fc.oneof(fc.constant(`${entitySet}(${key})`), fc.constant(`${entitySet}(${MISSING})`), bindValue(keys))
  const properties: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
    Customers: { Name: text(100), Email: text(254), City: text(60), Country: text(2), CreditLimit: decimal, Title: text(100) },
    Products: { Code: text(20), Name: text(100), Category: text(40), Price: decimal, Title: text(121) },
    Orders: { Number: integer, 'Customer@odata.bind': bind('Customers', keys.customer), OrderDate: date, Status: fc.oneof(fc.constantFrom('Open', 'Closed', 'open', ''), anyValue), Total: decimal, Title: text(30) },
    OrderLines: { 'Order@odata.bind': bind('Orders', keys.order), 'Product@odata.bind': bind('Products', keys.product), Quantity: integer, UnitPrice: decimal, LineTotal: decimal },
  }
  const own = properties[set]
  const record = fc.record(own, { requiredKeys: [] })
  const withLines = set === 'Orders'
    ? fc.tuple(record, fc.option(fc.array(fc.record(properties.OrderLines, { requiredKeys: [] }), { maxLength: 4 }), { nil: undefined }))
      .map(([order, lines]) => (lines === undefined ? order : { ...order, Lines: lines }))
    : record
  return withLines.map((value) => utf8(JSON.stringify(value)))
}

function entityWrite(keys: HostileKeys): fc.Arbitrary<{ method: string; path: string; body: Uint8Array | undefined }> {
  const key: Record<string, string> = { Customers: keys.customer, Products: keys.product, Orders: keys.order, OrderLines: keys.line }
  const query = fc.constantFrom('', '?$select=Name,Title', '?$expand=Lines', '?$select=Total&$expand=Lines($select=Quantity)', '?$select=*', '?$select=Nope', '?$expand=Nope', '?$filter=Total gt 1', '?$top=1')
  return fc.tuple(fc.constantFrom('Customers', 'Products', 'Orders', 'OrderLines'), fc.constantFrom('POST', 'PATCH', 'PATCH', 'PUT', 'DELETE'), query).chain(([set, method, options]) =>
    fc.tuple(fc.oneof(fc.constant(key[set]), fc.uuid()), method === 'DELETE' ? fc.option(fc.constantFrom('', '{}', 'null', '{"Name":"x"}').map(utf8), { nil: undefined }) : entityWriteBody(keys, set)).map(([target, body]) => ({
      method,
      path: `/api/${set}${method === 'POST' ? '' : `(${target})`}${options.replaceAll(' ', '%20')}`,
      body,
    })))
}

/** Calls of the demo plugin's methods: paths, parameters in the path, the query or the body. */
function methodCall(keys: HostileKeys): fc.Arbitrary<{ method: string; path: string; body: Uint8Array | undefined }> {
  const parameter = fc.oneof(literal(keys), fc.constantFrom('2024-01-01', '9999-12-31', '0001-01-01', "'2024-01-01'", '@p'))
  const path = fc.oneof(
    fc.constantFrom(`/api/Customers(${keys.customer})/Revenue()`, `/api/Customers(${keys.customer})/Revenue`, `/api/Customers(${MISSING})/Revenue()`,
      `/api/Orders(${keys.order})/Close`, `/api/Orders(${MISSING})/Close`, '/api/Products/Reprice', '/api/Orders/OpenSince(before=2024-01-01)',
      `/api/Orders(${keys.order})/Lines/Close`, '/api/Orders/OpenSince()', '/api/Orders/OpenSince', '/api/Customers/Revenue()', '/api/Orders/Close'),
    parameter.map((value) => `/api/Orders/OpenSince(before=${encode(value, false)})`),
    fc.tuple(parameter, parameter).map(([a, b]) => `/api/Orders/OpenSince?before=${encode(a, false)}&@p=${encode(b, false)}`),
    fc.tuple(parameter, fc.constantFrom('$top=2', '$select=Number', '$filter=Total gt 1', '$expand=Lines', '$count=true', '$orderby=Nope', '$apply=aggregate($count as n)'))
      .map(([value, option]) => `/api/Orders/OpenSince(before=${encode(value, false)})?${encode(option, true)}`),
  )
  const body = fc.option(
    fc.record({ category: anyValue, percent: anyValue, before: anyValue, extra: anyValue }, { requiredKeys: [] }).map((value) => utf8(JSON.stringify(value))),
    { nil: undefined },
  )
  return fc.tuple(fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PATCH', 'DELETE'), path, body).map(([method, target, payload]) => ({
    method, path: target, body: method === 'GET' ? undefined : payload,
  }))
}

// ---------------------------------------------------------------------------------------------
// Query options.

const selectValue = fc.oneof(
  fc.array(fc.constantFrom(...PROPERTIES, '*', 'Lines/Quantity', 'Customer/Name', '@odata.etag', 'entityctl.*', ''), { maxLength: 5 }).map((items) => items.join(',')),
  fc.constantFrom(',,', 'Name,Name', '*,Nope', 'Name($select=x)', 'Lines($top=1)'),
)

function expandValue(keys: HostileKeys): fc.Arbitrary<string> {
  const options = fc.array(
    fc.oneof(
      selectValue.map((value) => `$select=${value}`),
      expression(keys).map((value) => `$filter=${value}`),
      fc.integer({ min: -5, max: 100_000 }).map((n) => `$top=${n}`),
      fc.integer({ min: -5, max: 100 }).map((n) => `$skip=${n}`),
      fc.constantFrom('$count=true', '$levels=3', '$levels=max', '$levels=-1', '$orderby=Number desc', '$search=x', '$compute=Total as T', '$apply=aggregate($count as n)', '$expand=*'),
    ),
    { maxLength: 4 },
  )
  return fc.letrec<{ item: string }>((tie) => ({
    item: fc.oneof(
      { depthSize: 'small' },
      fc.constantFrom(...NAVIGATIONS, '*', '*/$ref', 'Lines/$ref', 'Lines/$count', 'Customer/Orders', ''),
      fc.tuple(fc.constantFrom(...NAVIGATIONS), options).map(([nav, opts]) => `${nav}(${opts.join(';')})`),
      fc.tuple(fc.constantFrom(...NAVIGATIONS), tie('item')).map(([nav, inner]) => `${nav}($expand=${inner})`),
    ),
  })).item.chain((first) => fc.array(fc.constantFrom(...NAVIGATIONS), { maxLength: 2 }).map((more) => [first, ...more].join(',')))
}

const deepExpand = fc.integer({ min: 3, max: 40 }).map((n) => `${'Lines($expand=Order($expand='.repeat(n)}Customer${'))'.repeat(n)}`)

function applyValue(keys: HostileKeys): fc.Arbitrary<string> {
  const step = fc.oneof(
    expression(keys).map((e) => `filter(${e})`),
    fc.tuple(fc.array(fc.constantFrom(...PROPERTY_PATHS), { maxLength: 3 }), fc.constantFrom('sum', 'average', 'min', 'max', 'countdistinct', 'median', '')).map(
      ([paths, method]) => `groupby((${paths.join(',')}),aggregate(Total with ${method} as R))`,
    ),
    fc.tuple(fc.constantFrom(...PROPERTY_PATHS), fc.constantFrom('sum', 'average', 'min', 'max', 'countdistinct', 'bogus')).map(
      ([path, method]) => `aggregate(${path} with ${method} as A)`,
    ),
    expression(keys).map((e) => `compute(${e} as C)`),
    fc.constantFrom(
      'aggregate($count as N)', 'top(5)', 'skip(2)', 'orderby(Total desc)', 'identity', 'topcount(2,Total)', 'bottompercent(50,Total)',
      'concat(identity,identity)', 'expand(Lines,filter(Quantity gt 1))', 'search(x)', 'groupby((Status))', 'groupby(())', 'aggregate()',
      'ancestors($root/Orders,H,Name,filter(true))', 'nest(groupby((Status)) as N)', 'join(Lines as L)', 'outerjoin(Lines as L)',
      'compute(Total mul 2 as Total)', 'aggregate(Total with sum as Total)/aggregate(Total with sum as T)',
    ),
  )
  return fc.array(step, { minLength: 1, maxLength: 4 }).map((steps) => steps.join('/'))
}

function orderbyValue(keys: HostileKeys): fc.Arbitrary<string> {
  return fc.array(fc.tuple(fc.oneof(fc.constantFrom(...PROPERTY_PATHS), expression(keys)), fc.constantFrom('', ' asc', ' desc', ' DESC', ' sideways')), { maxLength: 4 })
    .map((items) => items.map(([e, d]) => e + d).join(','))
}

const numericOption = fc.oneof(fc.integer({ min: -10, max: 1_000_000 }).map(String), fc.constantFrom('', 'abc', '1.5', '-0', '1e3', '99999999999999999999', ' 5', '0x10', 'null', '5;drop'))

function queryOption(keys: HostileKeys): fc.Arbitrary<[string, string]> {
  const valued = (name: string, value: fc.Arbitrary<string>) => value.map((v): [string, string] => [name, v])
  return fc.oneof(
    { weight: 5, arbitrary: valued('$filter', expression(keys)) },
    { weight: 2, arbitrary: valued('$select', selectValue) },
    { weight: 3, arbitrary: valued('$expand', fc.oneof({ weight: 4, arbitrary: expandValue(keys) }, { weight: 1, arbitrary: deepExpand })) },
    { weight: 2, arbitrary: valued('$orderby', orderbyValue(keys)) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom('$top', '$skip', '$levels', '$index'), numericOption) },
    { weight: 1, arbitrary: valued('$count', fc.constantFrom('true', 'false', 'TRUE', '1', 'yes', '')) },
    { weight: 3, arbitrary: valued('$apply', applyValue(keys)) },
    { weight: 1, arbitrary: valued('$search', fc.oneof(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('steel', 'a AND b', 'NOT', '"unclosed', '(x OR'))) },
    { weight: 1, arbitrary: valued('$compute', expression(keys).map((e) => `${e} as C`)) },
    { weight: 1, arbitrary: valued('$format', fc.constantFrom('json', 'xml', 'atom', 'application/json;odata.metadata=full', 'garbage', '')) },
    { weight: 1, arbitrary: valued('$skiptoken', fc.oneof(fc.string({ maxLength: 30 }), fc.base64String({ maxLength: 60 }))) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('@a', '@min', '@', '@@', 'before', 'category'), literal(keys)) },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.oneof(fc.constantFrom(...OPTION_NAMES).map((n) => n.toUpperCase()), fc.constantFrom(...OPTION_NAMES).map((n) => n.slice(1)), fc.constantFrom('$foo', 'foo', '', '$', '$filter$', 'odata.metadata')),
        fc.string({ maxLength: 20 }),
      ),
    },
  )
}

/** A query string: options encoded one way or another, sometimes with broken escapes. */
function queryString(option: fc.Arbitrary<[string, string]>): fc.Arbitrary<string> {
  return fc
    .array(option, { maxLength: 4 })
    .chain((options) =>
      options.length === 0
        ? fc.constant('')
        : fc.tuple(...options.map(([name, value]) => encodedValue(value).map((encoded) => `${encode(name, true)}=${encoded}`))).map(
            (parts) => `?${parts.join('&')}`,
          ),
    )
}

// ---------------------------------------------------------------------------------------------
// Headers and credentials.

const headerText = fc.string({ unit: 'grapheme-ascii', maxLength: 40 }).map((text) => text.replace(/[^\x20-\x7e]/g, ''))

function authorization(context: HostileContext): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    // Mostly real users, so most requests get past authentication to the stages behind it.
    { weight: 10, arbitrary: fc.constant(context.credentials.admin) },
    { weight: 4, arbitrary: fc.constant(context.credentials.restricted) },
    { weight: 4, arbitrary: fc.constantFrom(...CREDENTIAL_NAMES).map((name) => context.credentials[name]) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        headerText.map((text) => `Bearer ${text}`),
        headerText.map((text) => `Basic ${Buffer.from(`pat:${text}`).toString('base64')}`),
        headerText.map((text) => `Basic ${text}`),
        fc.constantFrom('Bearer', 'Bearer ', 'Basic', 'Negotiate abc', 'bearer  a.b.c', 'Bearer a.b.c', 'Basic cGF0Og==', 'Basic ====', 'Digest x', `Bearer ${'a'.repeat(8000)}`),
      ),
    },
  )
}

function headers(context: HostileContext, withBody: boolean): fc.Arbitrary<Record<string, string>> {
  const contentType = fc.oneof(
    { weight: 12, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        'application/json;charset=utf-8', 'application/json; charset=latin1', 'application/json;odata.metadata=full', 'text/plain',
        'application/xml', 'multipart/mixed;boundary=x', 'application/x-www-form-urlencoded', 'garbage', '', 'application/json;;;',
        'APPLICATION/JSON', 'application/merge-patch+json', 'application/json; charset=utf-16',
      ),
    },
    { weight: 1, arbitrary: headerText },
    { weight: 1, arbitrary: fc.constant(undefined) },
  )
  // Each request carries a few of these, most none: one bad header must not hide the rest.
  const optional: Record<string, fc.Arbitrary<string>> = {
    accept: fc.oneof(
      fc.constantFrom('application/json', 'application/xml', 'text/html', '*/*', 'application/json;odata.metadata=none', 'application/json;odata.metadata=full', 'application/atom+xml', 'text/plain', 'image/png', 'application/json;q=0', ''),
      headerText,
    ),
    'if-match': fc.oneof(fc.constantFrom('*', 'W/"1"', '"1"', 'W/"999"', 'W/""', 'W/"abc"', 'W/"1", W/"2"', ''), headerText),
    'if-none-match': fc.constantFrom('*', 'W/"1"', 'garbage'),
    prefer: fc.oneof(
      fc.constantFrom('return=minimal', 'return=representation', 'odata.maxpagesize=5', 'odata.maxpagesize=-1', 'odata.maxpagesize=99999999999', 'respond-async', 'odata.include-annotations="*"', 'odata.track-changes', 'return=minimal, return=representation', 'wait=10'),
      headerText,
    ),
    'odata-maxversion': fc.constantFrom('4.0', '4.01', '3.0', '5.0', 'x', ''),
    'odata-version': fc.constantFrom('4.0', '4.01', '2.0', 'x'),
    'workflow-id': fc.oneof(fc.uuid(), fc.constantFrom(context.workflowId ?? MISSING, 'garbage', '', 'null'), headerText),
    'workflow-index': fc.oneof(fc.integer({ min: -2, max: 300 }).map(String), fc.constantFrom('abc', '1.5', '99999999999999999999', '', '0x1')),
    'accept-charset': fc.constantFrom('utf-8', 'iso-8859-1', 'utf-32'),
    'x-http-method': fc.constantFrom('DELETE', 'PATCH', 'MERGE'),
  }
  const names = fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 2, arbitrary: fc.subarray(Object.keys(optional), { maxLength: 3 }) })
  const picked = names.chain((chosen) => fc.tuple(...chosen.map((name) => optional[name].map((value): [string, string] => [name, value]))))
  return fc.tuple(picked, withBody ? contentType : fc.constant(undefined), authorization(context)).map(([pairs, type, auth]) => {
    const result: Record<string, string> = Object.fromEntries(pairs)
    if (type !== undefined) result['content-type'] = type
    if (auth !== undefined) result.authorization = auth
    return result
  })
}

// ---------------------------------------------------------------------------------------------
// Bodies.

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'))

function bindValue(keys: HostileKeys): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constantFrom(`Customers(${keys.customer})`, `Products(${keys.product})`, `Orders(${keys.order})`, `Customers(${MISSING})`, 'Customers()', 'Nope(1)', '', `${keys.customer}`, 'http://evil/api/Customers(1)', `../Customers(${keys.customer})`),
    fc.jsonValue({ maxDepth: 1 }),
  )
}

/** A property value of any type: right, wrong, huge or nested. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, 11, 1.5, 1e308, -1e308, 2 ** 53, 'DE', 'Open', 'Closed', '2024-01-01', '2024-13-45', 'abc', null, true, [], {}) },
  { weight: 1, arbitrary: fc.integer({ min: 101, max: 5_000 }).map((n) => 'x'.repeat(n)) },
)

function entityBody(keys: HostileKeys): fc.Arbitrary<unknown> {
  return fc.letrec<{ entity: Record<string, unknown> }>((tie) => ({
    entity: fc
      .tuple(
        fc.dictionary(fc.constantFrom(...PROPERTIES, '@odata.etag', '@odata.type', 'odata.type', '__proto__', 'constructor'), anyValue, { maxKeys: 6 }),
        fc.dictionary(fc.constantFrom('Customer@odata.bind', 'Product@odata.bind', 'Order@odata.bind', 'Lines@odata.bind', 'Nope@odata.bind', 'Parent@odata.bind'), bindValue(keys), { maxKeys: 2 }),
        fc.option(fc.oneof({ depthSize: 'small' }, fc.array(tie('entity'), { maxLength: 3 }), anyValue), { nil: undefined }),
      )
      .map(([values, binds, lines]) => ({ ...values, ...binds, ...(lines === undefined ? {} : { Lines: lines }) })),
  })).entity
}

function jsonBody(keys: HostileKeys): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 4, arbitrary: entityBody(keys).map((value) => utf8(JSON.stringify(value))) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((value) => utf8(JSON.stringify(value))) },
    { weight: 1, arbitrary: fc.record({ category: anyValue, percent: anyValue, before: anyValue }, { requiredKeys: [] }).map((value) => utf8(JSON.stringify(value))) },
  )
}

/** Bodies no JSON parser likes, or likes too much. The largest stay under the 1 MiB body limit. */
const oddBody: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.integer({ min: 100, max: 50_000 }).map((n) => utf8('['.repeat(n) + ']'.repeat(n))),
  fc.integer({ min: 100, max: 20_000 }).map((n) => utf8(`${'{"Name":'.repeat(n)}1${'}'.repeat(n)}`)),
  fc.integer({ min: 10_000, max: 1_000_000 }).map((n) => utf8(JSON.stringify({ Name: 'x'.repeat(n) }))),
  fc.integer({ min: 1_000, max: 60_000 }).map((n) => utf8(JSON.stringify({ Lines: Array.from({ length: n }, () => ({ Quantity: 1 })) }))),
  fc.constantFrom('', 'null', '"str"', '1e999', '{', '{"Name":"a"', '{"Name":"\\ud800"}', '{"a":1,"a":2}', '\ufeff{}', '[]', 'true', '{"Name":"\\u0000"}', 'NaN', '{\'a\':1}').map(utf8),
)

// ---------------------------------------------------------------------------------------------
// The families.

/** Workflow-Id of the admin's open workflow and a small index, so some requests are the next one. */
const workflowHeaders = (context: HostileContext) =>
  fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constant(context.workflowId ?? MISSING) }, { weight: 1, arbitrary: fc.uuid() }), fc.integer({ min: 0, max: 12 }))
    .map(([id, index]): Record<string, string> => ({ 'workflow-id': id, 'workflow-index': String(index) }))

/** How a request reads in a report: shortened, so a 10 KB filter does not flood it. */
export function describeRequest(request: HostileRequest): string {
  const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…(${text.length} chars)` : text)
  const body = request.body === undefined ? '' : ` body(${request.body.byteLength} bytes)=${JSON.stringify(cut(Buffer.from(request.body.subarray(0, 200)).toString('utf8'), 160))}`
  const headerText = Object.entries(request.headers).map(([name, value]) => `${name}: ${cut(value, name === 'authorization' ? 24 : 80)}`).join(' | ')
  return `[${request.family}] ${request.method} ${cut(request.path, 300)} {${cut(headerText, 600)}}${body}`
}

// ---------------------------------------------------------------------------------------------
// $batch and $ref writes.

/** One part of a JSON batch: real requests, references to other parts, and fields of any type. */
function batchPart(keys: HostileKeys): fc.Arbitrary<Record<string, unknown>> {
  const url = fc.oneof(
    entityWrite(keys).map(({ path }) => path.slice('/api/'.length)),
    fc.constantFrom('$1', '$1/Lines', '$2/Customer', '$nope', '$', `Customers(${keys.customer})`, '/api/Customers', 'http://evil/api/Customers', '../Customers', '$batch', 'Orders/Close', ''),
    anyValue,
  )
  return fc.record({
    id: fc.oneof(fc.constantFrom('1', '2', '3', 'g1'), anyValue),
    method: fc.oneof(fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'get', 'MERGE'), anyValue),
    url,
    body: fc.oneof(entityBody(keys), anyValue),
    headers: fc.oneof(fc.constant({ 'if-match': '*' }), fc.constant({ 'content-type': 'text/plain' }), fc.dictionary(fc.string({ maxLength: 10 }), anyValue, { maxKeys: 3 }), anyValue),
    atomicityGroup: fc.oneof(fc.constantFrom('g1', 'g2', '1'), anyValue),
    dependsOn: fc.oneof(fc.array(fc.constantFrom('1', '2', '3', 'g1', 'g2', 'x'), { maxLength: 3 }), anyValue),
  }, { requiredKeys: ['method', 'url'] })
}

function jsonBatch(keys: HostileKeys): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.array(batchPart(keys), { maxLength: 6 }).map((requests) => utf8(JSON.stringify({ requests }))) },
    { weight: 1, arbitrary: anyValue.map((requests) => utf8(JSON.stringify({ requests }))) },
  )
}

/** Multipart batches (OData 4.0) as UI5 sends them, then broken: boundaries, nesting, part heads. */
function multipartBatch(keys: HostileKeys): fc.Arbitrary<{ boundary: string; body: Uint8Array }> {
  const request = fc.tuple(fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'FOO'), entityWrite(keys), fc.constantFrom('', 'Content-ID: 1\r\n', 'Content-ID: $1\r\n', 'Content-ID:\r\n'))
    .map(([method, { path, body }, id]) =>
      `Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n${id}\r\n${method} ${path.slice('/api/'.length)} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n${body ? Buffer.from(body).toString('utf8') : ''}\r\n`)
  return fc.tuple(fc.array(request, { maxLength: 4 }), fc.constantFrom('b', 'batch_1', ''), fc.boolean(), fc.constantFrom('', '--', '\r\n--cs--', 'garbage')).map(([parts, boundary, asChangeSet, tail]) => {
    const inner = asChangeSet
      ? `Content-Type: multipart/mixed; boundary=cs\r\n\r\n${parts.map((part) => `--cs\r\n${part}`).join('')}--cs--\r\n`
      : parts[0] ?? ''
    const body = `--${boundary}\r\n${inner}${parts.slice(1).map((part) => `--${boundary}\r\n${part}`).join('')}--${boundary}${tail}\r\n`
    return { boundary, body: utf8(body) }
  })
}

function refWrite(keys: HostileKeys): fc.Arbitrary<{ method: string; path: string; body: Uint8Array | undefined }> {
  const path = fc.constantFrom(
    `Orders(${keys.order})/Customer/$ref`, `OrderLines(${keys.line})/Product/$ref`, `Customers(${keys.customer})/Orders/$ref`, `Orders(${keys.order})/Lines/$ref`,
    `Orders(${keys.order})/Lines/$ref?$id=OrderLines(${keys.line})`, `Customers(${keys.customer})/Orders/$ref?$id=${encode('Orders(x)', false)}`, `Orders(${MISSING})/Customer/$ref`,
    `Orders(${keys.order})/Nope/$ref`, `Orders(${keys.order})/Total/$ref`, `Orders(${keys.order})/$ref`, 'Orders/$ref', `Users(${keys.customer})/Roles/$ref`,
  )
  const body = fc.option(fc.oneof(
    fc.record({ '@odata.id': fc.oneof(bindValue(keys), fc.constantFrom(`http://127.0.0.1/api/Customers(${keys.customer})`, `Orders(${keys.order})`, `OrderLines(${keys.line})`)) }).map((value) => utf8(JSON.stringify(value))),
    jsonBody(keys),
  ), { nil: undefined })
  return fc.tuple(fc.constantFrom('PUT', 'POST', 'DELETE', 'PATCH'), path, body).map(([method, target, payload]) => ({ method, path: `/api/${target}`, body: payload }))
}

/** fast-check prints counterexamples with this, and shrinking keeps it. */
const described = (request: HostileRequest): HostileRequest =>
  Object.defineProperty(request, fc.toStringMethod, { value: () => describeRequest(request), enumerable: false })

const METHODS = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'MERGE', 'TRACE', 'PROPFIND'] as const

export function hostileRequests(context: HostileContext, families: readonly Family[] = FAMILIES): fc.Arbitrary<HostileRequest> {
  const { keys } = context
  const make = (family: Family, method: fc.Arbitrary<string>, path: fc.Arbitrary<string>, body: fc.Arbitrary<Uint8Array | undefined>, extra: fc.Arbitrary<Record<string, string>> = fc.constant({})) =>
    fc.tuple(method, path, body).chain(([m, p, b]) =>
      fc.tuple(headers(context, b !== undefined), extra).map(([h, e]) => described({ family, method: m, path: p, headers: { ...h, ...e }, body: b })),
    )
  // Mostly paths that exist, so the query options are what the server looks at.
  const withQuery = (option: fc.Arbitrary<[string, string]>) =>
    fc.tuple(fc.oneof({ weight: 3, arbitrary: validPath(keys) }, { weight: 2, arbitrary: resourcePath(keys) }), queryString(option)).map(([path, query]) => path + query)
  const generators: Record<Family, fc.Arbitrary<HostileRequest>> = {
    query: make('query', fc.constantFrom('GET', 'GET', 'GET', 'HEAD'), withQuery(queryOption(keys)), fc.constant(undefined)),
    deepExpression: make('deepExpression', fc.constant('GET'), fc.tuple(fc.constantFrom('/api/Orders', '/api/Customers', '/api/OrderLines'), fc.constantFrom('$filter', '$orderby', '$apply'), deepExpression(keys)).map(
      ([path, option, text]) => `${path}?${option}=${encode(option === '$apply' ? `filter(${text})` : text, false)}`,
    ), fc.constant(undefined)),
    method: methodCall(keys).chain(({ method, path, body }) => make('method', fc.constant(method), fc.constant(path), fc.constant(body))),
    workflow: fc.oneof(
      entityWrite(keys).chain(({ method, path, body }) => make('workflow', fc.constant(method), fc.constant(path), fc.constant(body), workflowHeaders(context))),
      fc.tuple(fc.constantFrom('/api/workflow/commit', '/api/workflow/abort', '/api/Orders?$top=1', `/api/Orders(${keys.order})/Close`))
        .chain(([path]) => make('workflow', fc.constant(path.startsWith('/api/Orders?') ? 'GET' : 'POST'), fc.constant(path), fc.constant(undefined), workflowHeaders(context))),
    ),
    sqlEdge: make('sqlEdge', fc.constantFrom('GET', 'GET', 'GET', 'HEAD'), sqlEdgeQuery(), fc.constant(undefined)),
    entityWrite: entityWrite(keys).chain(({ method, path, body }) => make('entityWrite', fc.constant(method), fc.constant(path), fc.constant(body))),
    batch: fc.oneof(
      make('batch', fc.constant('POST'), fc.constantFrom('/api/$batch', '/api/$batch?$top=1'), jsonBatch(keys), fc.constant({ 'content-type': 'application/json' })),
      multipartBatch(keys).chain(({ boundary, body }) =>
        make('batch', fc.constant('POST'), fc.constant('/api/$batch'), fc.constant(body), fc.constantFrom({ 'content-type': `multipart/mixed; boundary=${boundary}` }, { 'content-type': 'multipart/mixed' }))),
    ),
    refWrite: refWrite(keys).chain(({ method, path, body }) => make('refWrite', fc.constant(method), fc.constant(path), fc.constant(body))),
    overlongHead: make('overlongHead', fc.constantFrom('GET', 'POST'), fc.oneof(
      fc.integer({ min: 17_000, max: 60_000 }).map((n) => `/api/Customers?$filter=${encode(`Name eq '${'a'.repeat(n)}'`, false)}`),
      fc.constant('/api/Customers'),
    ), fc.constant(undefined), fc.oneof(
      fc.integer({ min: 17_000, max: 40_000 }).map((n): Record<string, string> => ({ 'x-filler': 'x'.repeat(n) })),
      fc.integer({ min: 200, max: 2_000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, 'y'.repeat(20)]))),
      fc.constant({}),
    )),
    nulBody: make('nulBody', fc.constantFrom('POST', 'PATCH', 'PUT'), fc.constantFrom(
      '/api/Customers', '/api/Products', `/api/Customers(${keys.customer})`, `/api/Products(${keys.product})`, '/api/auth/signin', '/api/Roles', '/api/user/pats',
    ), fc.tuple(fc.constantFrom('Name', 'City', 'Code', 'Category', 'TenantId', 'Username', 'Password', 'Email'), fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 })).map(
      ([name, a, b]) => utf8(JSON.stringify({ Name: 'Nul', Code: 'NUL', Price: 1, TenantId: 'x', Username: 'x', Password: 'x', [name]: `${a}\u0000${b}` })),
    ).map((body) => body as Uint8Array | undefined)),
    nulLiteral: make('nulLiteral', fc.constant('GET'), fc.tuple(fc.constantFrom('Name', 'Customer/Country', 'Code', 'Status'), fc.constantFrom('eq', 'gt'), nulLiteral).map(
      ([path, op, text]) => `/api/${path === 'Code' ? 'Products' : path === 'Status' ? 'Orders' : 'Customers'}?$filter=${encode(`${path.replace('Customer/', '')} ${op} ${text}`, false)}`,
    ), fc.constant(undefined)),
    write: make('write', fc.constantFrom(...METHODS), withQuery(queryOption(keys)), fc.option(jsonBody(keys), { nil: undefined })),
    oddBody: make('oddBody', fc.constantFrom('POST', 'PATCH', 'PUT', 'DELETE'), resourcePath(keys), oddBody),
    corruptEncoding: make('corruptEncoding', fc.constantFrom('POST', 'PATCH', 'PUT'), resourcePath(keys), fc.oneof(jsonBody(keys), fc.uint8Array({ maxLength: 100 })),
      fc.constantFrom('gzip', 'deflate', 'br', 'x-gzip', 'gzip, gzip', 'identity', 'compress', 'zstd', 'garbage').map((encoding) => ({ 'content-encoding': encoding }))),
    systemRoute: make('systemRoute', fc.constantFrom('GET', 'POST', 'POST', 'POST', 'DELETE', 'PUT'), fc.tuple(pathPrefix, fc.constantFrom(
      'auth/signin', 'auth/refresh', 'auth/signout', 'auth', 'user/pats', `user/pats/${keys.customer}/revoke`, 'user/pats/x/regenerate', 'user/pats/%00/revoke',
      'roles/tree', 'workflow', 'workflow/commit', 'workflow/abort', 'workflow/x',
    )).map(([prefix, path]) => prefix + path), fc.option(fc.oneof(
      fc.record({ TenantId: anyValue, Username: anyValue, Password: anyValue, RefreshToken: anyValue, Name: anyValue, ExpiresAt: anyValue, ExpiresInDays: anyValue, ResponsibilityIds: anyValue }, { requiredKeys: [] })
        .map((value) => utf8(JSON.stringify(value))),
      oddBody,
    ), { nil: undefined })),
  }
  return fc.oneof(...families.map((family) => generators[family]))
}

// ---------------------------------------------------------------------------------------------
// Forged credentials: tokens that look right and are not, signed with the server's own key
// where the point is a wrong claim (expired, unknown tenant, another tenant's user, another
// audience), and with another key where the point is the signature.

export interface TokenSettings {
  readonly signingKey: string
  readonly issuer: string
  readonly audience: string
  readonly tenant: string
  /** A user of another tenant (or of none): the token names it with `tenant`. */
  readonly otherUserGuid: string
}

export async function forgedTokens(settings: TokenSettings): Promise<Pick<Credentials, 'expired' | 'wrongSignature' | 'unknownTenant' | 'otherTenantUser' | 'wrongAudience'>> {
  const key: Uint8Array = Buffer.from(settings.signingKey, 'base64url')
  const now = Math.floor(Date.now() / 1000)
  const sign = (claims: { tid: string; sub: string; aud?: string; iat?: number; exp?: number }, with_ = key) =>
    new SignJWT({ tid: claims.tid })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(settings.issuer)
      .setAudience(claims.aud ?? settings.audience)
      .setIssuedAt(claims.iat ?? now)
      .setExpirationTime(claims.exp ?? now + 3600)
      .sign(with_)
  const bearer = async (token: Promise<string>) => `Bearer ${await token}`
  return {
    expired: await bearer(sign({ tid: settings.tenant, sub: settings.otherUserGuid, iat: now - 7200, exp: now - 3600 })),
    wrongSignature: await bearer(sign({ tid: settings.tenant, sub: settings.otherUserGuid }, new Uint8Array(32).fill(7))),
    unknownTenant: await bearer(sign({ tid: 'no-such-tenant', sub: settings.otherUserGuid })),
    otherTenantUser: await bearer(sign({ tid: settings.tenant, sub: settings.otherUserGuid })),
    wrongAudience: await bearer(sign({ tid: settings.tenant, sub: settings.otherUserGuid, aud: 'someone-else' })),
  }
}

// ---------------------------------------------------------------------------------------------
// What a hostile request must get back.

/** Why the answer is wrong, or undefined when it is a proper one. */
export function answerProblem(request: Pick<HostileRequest, 'method'>, status: number, contentType: string | undefined, body: Buffer): string | undefined {
  if (status >= 500 && status !== 501) return `status ${status}`
  if (status < 400 || request.method === 'HEAD') return undefined
  if (!/^application\/json\b/i.test(contentType ?? '')) return `status ${status} with content-type ${contentType ?? 'none'}`
  let parsed: unknown
  try {
    parsed = JSON.parse(body.toString('utf8'))
  } catch {
    return `status ${status} with a body that is not JSON`
  }
  const error = (parsed as { error?: { code?: unknown; message?: unknown } } | null)?.error
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') return `status ${status} without an OData error body`
  if (status === 501 && error.code !== 'NotImplemented') return `501 with code ${error.code}`
  return undefined
}
