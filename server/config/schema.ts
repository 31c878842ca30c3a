// Every configuration key, its type, default and meaning. The loader validates against this
// table and the config reference in the README is written from it (`entityctl config keys`).

export type KeyType = 'string' | 'integer' | 'number' | 'boolean' | 'secret'

export interface KeySpec {
  readonly type: KeyType
  readonly default?: string | number | boolean
  readonly min?: number
  readonly max?: number
  readonly oneOf?: readonly string[]
  readonly doc: string
}

export const SECTIONS = {
  Server: {
    Port: { type: 'integer', default: 8080, min: 0, max: 65535, doc: 'HTTP port (`--port` and `PORT` override it).' },
    Host: { type: 'string', default: '127.0.0.1', doc: 'Address to listen on; `0.0.0.0` for all interfaces.' },
    PluginsDir: { type: 'string', default: 'plugins', doc: 'Folder of plugin files; a relative path is taken from the project folder (where entityctl is installed), not from the config file\'s folder.' },
    LogLevel: {
      type: 'string',
      default: 'info',
      oneOf: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
      doc: 'pino log level. At `info`, one JSON line per request (id, method, URL, status, ms, tenant, user) on stdout, written in batches of about 4 KB: a line is at most a second late, and a clean stop writes every line. A line is at most 16 KB: longer values are shortened with a marker.',
    },
    LogQueryValues: {
      type: 'boolean',
      default: false,
      doc: 'false: the log shows no value a client sent in a URL, which may be personal data (a name or e-mail address in a $filter): on the request line and the lines saying why a request was refused, the literals of $filter, $orderby, $expand, $apply and $compute, the words of $search, the values of parameter aliases, custom options and function parameters, and quoted text and `name=value` values in the path are `?`; option and property names, operators and the query\'s shape stay (README "Running it as a service"). true: URLs and messages as sent, for debugging.',
    },
    ShutdownTimeoutSeconds: { type: 'integer', default: 10, min: 0, max: 600, doc: 'How long in-flight requests may take to finish on SIGINT/SIGTERM. A second SIGINT/SIGTERM during that wait stops the server at once (exit 128 + the signal\'s number).' },
    HeadersTimeoutSeconds: { type: 'number', default: 20, min: 0.1, max: 600, doc: 'A client must send the line and headers of a request within this long; a slower one gets 408 and its connection is closed.' },
    RequestTimeoutSeconds: { type: 'number', default: 120, min: 0.1, max: 3600, doc: 'A client must send the whole request, body included, within this long (at least HeadersTimeoutSeconds); a slower one gets 408 and its connection is closed.' },
    KeepAliveTimeoutSeconds: { type: 'number', default: 65, min: 0.1, max: 3600, doc: 'An idle keep-alive connection is closed after this long (above a load balancer\'s idle timeout, commonly 60 s).' },
    MaxHeaderBytes: { type: 'integer', default: 65536, min: 1024, max: 1048576, doc: 'Largest request line and headers together; a larger head gets 431 and its connection is closed. The default leaves room for the longest query string the parser reads (32 KB) and a token.' },
    MaxConnections: { type: 'integer', default: 1000, min: 1, max: 1000000, doc: 'Largest number of open client connections, idle keep-alive ones included; above it a new connection is closed at once, without an answer, and a warning is logged (at most one per 10 s). Keep it below the open-file limit.' },
    MetricsPort: { type: 'integer', default: 0, min: 0, max: 65535, doc: 'Port of the Prometheus metrics listener (`GET /metrics`, no credentials), apart from the API. 0: no listener, and no metrics are collected.' },
    MetricsHost: { type: 'string', default: '127.0.0.1', doc: 'Address of the metrics listener; keep it on loopback or a private network, as it asks no credentials.' },
    MigrateOnStart: {
      type: 'boolean',
      default: true,
      doc: 'Whether `serve` migrates the tenants whose schema is behind the plugins before serving. false (or `serve --no-migrate`): for deployments that migrate in a step of their own (`entityctl migrate`); a tenant behind then answers 503 and is listed by /readyz until migrated.',
    },
    PublicUrl: { type: 'string', default: '', doc: 'Base URL of the server, without `/api` (`https://api.example.com`, or with the path a proxy serves it under): @odata.context, nextLink, Location and the @odata.bind URLs a body may give are this plus `/api/`. Empty: taken from each request.' },
    TrustedProxies: {
      type: 'string',
      default: '',
      doc: 'Comma-separated addresses and CIDR ranges of the reverse proxies in front of the server. Only for a request from one of them is the client address read from `X-Forwarded-For` (the rightmost address that is not a trusted proxy); otherwise it is the socket address. Empty: no proxy is trusted.',
    },
  },
  Database: {
    ConnectionString: { type: 'secret', default: '', doc: 'PostgreSQL server for tenant databases (e.g. `postgres://user:pw@host:5432/postgres`). Empty: the embedded PostgreSQL.' },
    EmbeddedPort: { type: 'integer', default: 54329, min: 1, max: 65535, doc: 'Port of the embedded PostgreSQL (used when ConnectionString is empty).' },
    EmbeddedDataDir: { type: 'string', default: '.data/postgres', doc: 'Data folder of the embedded PostgreSQL, relative to the project folder.' },
    PoolSizePerTenant: { type: 'integer', default: 4, min: 1, max: 100, doc: 'Largest number of connections one tenant may hold.' },
    MaxConnections: { type: 'integer', default: 40, min: 1, max: 10000, doc: 'Largest number of connections of this server over all tenants; idle tenants release theirs.' },
    AcquireTimeoutSeconds: { type: 'number', default: 10, min: 0.05, max: 3600, doc: 'How long a request waits for a connection of its tenant\'s pool (a heavy read: first for its lane, see "Time and fairness"); then 503 `ServiceUnavailable` with `Retry-After`.' },
    TenantIdleSeconds: { type: 'integer', default: 60, min: 1, max: 86400, doc: 'A tenant pool with no request for this long is closed.' },
    RememberedRows: { type: 'integer', default: 10000, min: 0, max: 10000000, doc: 'Rows (and sets of a parent\'s members) that writes loaded or wrote, which this server keeps over all tenants so that the next write needing them saves their load: an order\'s customer and products, a changed line\'s order and its lines. A write checks everything it takes inside its own statement (row version and xmin, the count of members): a row changed by another server, an admin, SQL or a restore costs that write a second try, never a wrong value. Rows of entities with encrypted properties are not kept. 0: none.' },
    PlanForValuesAfterMs: { type: 'integer', default: 10, min: 0, max: 3600000, doc: 'A heavy read (a filter, count, aggregate…) whose query shape took longer than this in each of its last three runs (each divided by the statements of its tenant running beside it) is tried with plans made for its parameter values; they are kept while they run at least 5% quicker than the generic plan, measured again every 500 runs ([Performance](#performance): Plans). 0: every statement keeps its generic plan.' },
  },
  ApiOptions: {
    EnableLowerCamelCase: { type: 'boolean', default: false, doc: 'true: the public model (metadata, query options, bodies) names properties, navigation properties, methods, their parameters and the fields of the system routes in lower camel case; entity sets, types and enumeration members keep their names (`/api/Customers?$select=name`).' },
    DefaultSelect: { type: 'string', default: 'Key', oneOf: ['Key', 'All'], doc: 'What a read without $select returns: `Key` (Guid only, the specification) or `All` (like $select=*).' },
    MaxTop: { type: 'integer', default: 500, min: 1, max: 100000, doc: 'Largest $top; also the page size of server-driven paging.' },
    MaxNodeCount: { type: 'integer', default: 100, min: 1, max: 100000, doc: 'Largest number of nodes in a query (see the query reference).' },
    MaxExpansionDepth: { type: 'integer', default: 5, min: 0, max: 100, doc: 'Largest depth of $expand.' },
    QueryTimeoutSeconds: { type: 'number', default: 30, min: 0, max: 86400, doc: 'Longest time one statement of a request may run (PostgreSQL statement_timeout on the server\'s tenant connections; not the CLI or migrations); then 503 `QueryTimeout` with `Retry-After`. 0: no limit.' },
    PluginTimeoutSeconds: { type: 'number', default: 30, min: 0, max: 86400, doc: 'Longest time one call of plugin code (a rule, a method) may keep a request waiting, as for a promise that never settles, and a client that goes away ends the wait at once; then 500 `PluginFailed` naming the rule or method, and nothing of the request is saved. Code that blocks the event loop that long (an endless loop) ends the `serve` process instead, with a `fatal` log line naming where it was stuck, and exit code 1. Not the CLI or migrations. 0: no limit.' },
    MaxResultItems: { type: 'integer', default: 1000000000, min: 1, max: 1e15, doc: 'Largest number of entities a read may return, counted before it runs: the page size times, per entity, what its expands add (a collection $expand counts its $top, or MaxTop without one). Above it: 400 QueryLimitExceeded, and nothing runs.' },
    MaxResponseBytes: { type: 'integer', default: 33554432, min: 1024, max: 268435456, doc: 'Largest read answer in bytes, counted while it is produced. Passed before anything is sent: 400 QueryLimitExceeded; passed while streaming: the body is cut off (malformed) and the connection closed.' },
    MaxBodyBytes: { type: 'integer', default: 1048576, min: 1024, max: 1073741824, doc: 'Largest request body (413 above).' },
    MaxBodyEntities: { type: 'integer', default: 1000, min: 1, max: 1000000, doc: 'Largest number of entities one write body creates or binds, nested ones included (400 QueryLimitExceeded above).' },
    MaxCollectionMembers: { type: 'integer', default: 500, min: 1, max: 1000000, doc: 'Largest number of members of one collection in a write body, e.g. the Lines of a deep-inserted order (400 QueryLimitExceeded above).' },
    MaxBatchRequests: { type: 'integer', default: 100, min: 1, max: 100000, doc: 'Largest number of requests in one `$batch` (change set members included); above it the batch is 400 QueryLimitExceeded before any of its requests runs.' },
    'Cors:AllowedOrigins': {
      type: 'string',
      default: '',
      doc: 'Comma-separated origins (`https://app.example.com`) whose browser pages may call the API across origins, or `*` for any. Empty: CORS is off, and responses carry no CORS headers.',
    },
    'Cors:AllowCredentials': { type: 'boolean', default: false, doc: 'true: CORS answers allow credentials the browser manages itself (cookies, HTTP authentication it prompted for); not needed for a bearer token set by the page. Not allowed with `*`.' },
    'Cors:MaxAgeSeconds': { type: 'integer', default: 600, min: 0, max: 86400, doc: 'How long a browser may reuse the answer to a preflight (`Access-Control-Max-Age`).' },
    RoleCacheExpirationMinutes: { type: 'number', default: 5, min: 0, max: 1440, doc: 'Lifetime of the cached roles and responsibilities of a user; 0 disables the cache.' },
    ResponsibilityCacheExpirationMinutes: { type: 'number', default: 5, min: 0, max: 1440, doc: 'Lifetime of the cached PAT scope; 0 disables the cache.' },
  },
  JWT: {
    Issuer: { type: 'string', default: 'entityctl', doc: 'iss of issued tokens; tokens of another issuer are refused.' },
    Audience: { type: 'string', default: 'entityctl-api', doc: 'aud of issued tokens; tokens for another audience are refused.' },
    AccessTokenExpirationHours: { type: 'number', default: 0.5, min: 0.001, max: 720, doc: 'Access token lifetime.' },
    RefreshTokenExpirationDays: { type: 'number', default: 14, min: 0.001, max: 3650, doc: 'Refresh token lifetime.' },
    SigningKey: {
      type: 'secret',
      doc: "HMAC key that signs access tokens: at least 32 random bytes, base64url. install.sh generates one; make one yourself with `node -e \"console.log(require('crypto').randomBytes(32).toString('base64url'))\"`. A running server follows a new one written in its config file; replaced, the tokens it signed are refused unless it is kept in PreviousSigningKeys (Operating entityctl: \"Rotating the JWT signing key\").",
    },
    PreviousSigningKeys: {
      type: 'secret',
      default: '',
      doc: 'Comma-separated keys, each like SigningKey, that still verify access tokens but never sign: the SigningKey before a rotation, until the tokens it signed have expired (`AccessTokenExpirationHours`). A key taken off the list is refused at once. Followed while running, like SigningKey.',
    },
  },
  SignIn: {
    MaxFailures: { type: 'integer', default: 5, min: 1, max: 1000, doc: 'Failed sign-ins of one user name of a tenant within `SignIn:WindowSeconds` before it is locked (429 with Retry-After); unknown names count alike.' },
    LockoutSeconds: { type: 'integer', default: 60, min: 1, max: 86400, doc: 'How long a locked user name must wait.' },
    MaxFailuresPerAddress: { type: 'integer', default: 20, min: 0, max: 100000, doc: 'Failed sign-ins from one client address (an IPv6 /64) to a tenant, whatever the user names, within the window before the address is locked (429 with Retry-After). 0: no limit.' },
    AddressLockoutSeconds: { type: 'integer', default: 300, min: 1, max: 86400, doc: 'How long a locked client address must wait.' },
    MaxFailuresPerTenant: { type: 'integer', default: 500, min: 0, max: 1000000, doc: 'Failed sign-ins to one tenant from anywhere within the window before sign-in to the whole tenant is locked (429 with Retry-After), even with the right password. 0: no limit.' },
    TenantLockoutSeconds: { type: 'integer', default: 60, min: 1, max: 86400, doc: 'How long sign-in to a locked tenant must wait.' },
    WindowSeconds: { type: 'integer', default: 900, min: 1, max: 86400, doc: 'Failures count towards the limits for this long (or one lockout, if longer).' },
  },
  Workflow: {
    IdleTimeoutMinutes: { type: 'number', default: 30, min: 0.01, max: 10080, doc: 'An idle workflow expires and is discarded after this long.' },
    MaxRequests: { type: 'integer', default: 200, min: 1, max: 100000, doc: 'Largest number of requests in one workflow (400 above).' },
    MaxOpenPerUser: {
      type: 'integer',
      default: 20,
      min: 1,
      max: 100000,
      doc: 'Largest number of open workflows one user holds in a tenant at once (committed, aborted and expired ones do not count); starting one more is 400 WorkflowLimitExceeded.',
    },
  },
  Housekeeping: {
    Schedule: { type: 'string', default: '17 * * * *', doc: 'node-cron schedule of the purge of expired tokens and workflows.' },
    RetentionDays: { type: 'number', default: 7, min: 0, max: 3650, doc: 'Expired PATs and refresh tokens are kept this long before being purged.' },
  },
} as const satisfies Record<string, Record<string, KeySpec>>

/** Per tenant, under `Tenants:<name>`. */
export const TENANT_KEYS = {
  Database: { type: 'string', doc: 'Database name on the Database server; default `entityctl_<tenant>`.' },
  ConnectionString: { type: 'secret', doc: 'Full connection string; overrides Database and the Database server.' },
  EncryptionKey: { type: 'secret', doc: 'Key (32 bytes, base64) encrypting properties marked encrypted. Required. Change it only with `entityctl tenant rotate-key`.' },
  PreviousEncryptionKey: {
    type: 'secret',
    doc: 'Set by `entityctl tenant rotate-key` while it re-encrypts the data, and removed when it is done: values still under the old key stay readable meanwhile. Do not set it by hand.',
  },
  Disabled: { type: 'boolean', default: false, doc: 'true: the tenant\'s requests are refused (401) and its pool closed, its data kept (`entityctl tenant disable`/`enable`); a start does not enter its database, and once enabled its first request checks and migrates its schema.' },
  Moving: {
    type: 'boolean',
    default: false,
    doc: 'Set by `entityctl tenant move` while it copies the tenant, and removed when it is done: requests are answered 503 with Retry-After and its pool closed. Do not set it by hand (`tenant enable` removes one a killed move left).',
  },
} as const satisfies Record<string, KeySpec>
