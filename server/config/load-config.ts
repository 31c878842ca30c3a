// Reads the JSON config file, applies environment overrides (nested keys joined by a double
// underscore: ApiOptions__MaxTop=100, Tenants__acme__ConnectionString=...) and validates every
// key against schema.ts. Bad values stop the start with every key and problem named at once.

import { existsSync, readFileSync } from 'node:fs'
import { chmod, chown, rename, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import cron from 'node-cron'
import { SECTIONS, TENANT_KEYS, type KeySpec } from './schema.ts'
import { trustedProxyList } from './trusted-proxies.ts'

export const PROJECT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

type SectionName = keyof typeof SECTIONS
type ValueOf<S> = S extends { type: infer T } ? ValueOfType<T> : never
type ValueOfType<T> = T extends 'boolean' ? boolean : T extends 'integer' | 'number' ? number : string
type Section<N extends SectionName> = { readonly [K in keyof (typeof SECTIONS)[N]]: ValueOf<(typeof SECTIONS)[N][K]> }

export interface TenantConfig {
  readonly name: string
  readonly Database: string
  readonly ConnectionString: string
  readonly EncryptionKey: string
  /** The key before `tenant rotate-key`, set only while a rotation runs: values under it stay readable. */
  readonly PreviousEncryptionKey?: string
  /** Refused and closed, data kept (`entityctl tenant disable`). */
  readonly Disabled: boolean
  /** Answered 503 and closed while `entityctl tenant move` copies it. */
  readonly Moving?: boolean
}

export type Config = { readonly [N in SectionName]: Section<N> } & {
  readonly Tenants: ReadonlyMap<string, TenantConfig>
  /** Where the file was read from (tenant add/remove writes back there). */
  readonly path: string
}

export class ConfigError extends Error {
  /** Every problem found, each `Configuration <key>: <problem>`; the message has them all. */
  readonly problems: readonly string[]
  constructor(key: string, problem: string, problems?: readonly string[]) {
    super(problems ? `${problems.length} configuration problems:\n  ${problems.join('\n  ')}` : `Configuration ${key}: ${problem}`)
    this.name = 'ConfigError'
    this.problems = problems ?? [this.message]
  }

  /** One error holding every problem of `errors` (at least one). */
  static of(errors: readonly ConfigError[]): ConfigError {
    return errors.length === 1 ? errors[0] : new ConfigError('', '', errors.flatMap((error) => error.problems))
  }
}

export const TENANT_NAME = /^[a-z][a-z0-9_-]{0,39}$/

export function configPath(explicit?: string): string {
  const path = explicit ?? process.env.ENTITYCTL_CONFIG ?? 'entityctl.json'
  return isAbsolute(path) ? path : resolve(explicit || process.env.ENTITYCTL_CONFIG ? process.cwd() : PROJECT_DIR, path)
}

/** The file as written, without environment overrides: what `tenant add` edits. */
export function readConfigFile(path: string): Record<string, any> {
  if (!existsSync(path)) return {}
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8'))
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the top level must be an object')
    return parsed
  } catch (error) {
    throw new ConfigError(path, `is not valid JSON: ${(error as Error).message}`)
  }
}

export async function writeConfigFile(path: string, content: Record<string, any>): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`
  // The new file takes the old one's mode and, written by root (sudo), its owner: the servers
  // of a service user must still read it. A first file is readable by its writer only.
  const existing = await stat(path).catch(() => undefined)
  await writeFile(temporary, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 })
  if (existing) {
    await chmod(temporary, existing.mode & 0o777)
    if (process.getuid?.() === 0) await chown(temporary, existing.uid, existing.gid)
  }
  await rename(temporary, path)
}

/**
 * The validated configuration. Every problem of the file and the environment is found before
 * anything is refused: one ConfigError lists them all (`config check` prints each).
 * `serving`: also what only serving needs (the key that signs access tokens), as `serve`,
 * `config check` and `doctor` ask; admin commands run without it (a first `tenant add`).
 */
export function loadConfig(path = configPath(), env: NodeJS.ProcessEnv = process.env, options: { serving?: boolean } = {}): Config {
  const raw = applyEnvironment(readConfigFile(path), env)
  const problems: ConfigError[] = []
  /** The value `read` gives, or undefined after recording its problem. */
  const attempt = <T>(read: () => T): T | undefined => {
    try {
      return read()
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      problems.push(error)
      return undefined
    }
  }
  const config: Record<string, unknown> = { path }
  for (const key of Object.keys(raw)) {
    if (key !== 'Tenants' && !(key in SECTIONS)) problems.push(new ConfigError(key, `unknown section; known: ${[...Object.keys(SECTIONS), 'Tenants'].join(', ')}`))
  }
  for (const [sectionName, keys] of Object.entries(SECTIONS)) {
    config[sectionName] = readSection(sectionName, keys, raw[sectionName] ?? {}, problems)
  }
  attempt(() => checkCors(config.ApiOptions as Record<string, unknown>))
  attempt(() => checkTimeouts(config.Server as Config['Server']))
  attempt(() => trustedProxyList((config.Server as Config['Server']).TrustedProxies ?? ''))
  attempt(() => checkPublicUrl((config.Server as Config['Server']).PublicUrl))
  attempt(() => checkSchedule(config.Housekeeping as Config['Housekeeping']))
  attempt(() => checkConnectionString('Database:ConnectionString', (config.Database as Record<string, unknown>).ConnectionString))
  if (options.serving) {
    attempt(() => jwtSigningKey(config.JWT as Config['JWT']))
    attempt(() => jwtPreviousSigningKeys(config.JWT as Config['JWT']))
    // $PORT overrides Server:Port for serve: checked here, so config check and doctor say what serve would.
    attempt(() => portVariable(env.PORT))
  }
  const tenants = new Map<string, TenantConfig>()
  const rawTenants = raw.Tenants ?? {}
  if (typeof rawTenants !== 'object' || Array.isArray(rawTenants)) problems.push(new ConfigError('Tenants', 'must be an object of tenant name → settings'))
  else {
    for (const [name, settings] of Object.entries(rawTenants)) {
      const tenant = attempt(() => readTenant(name, settings, problems))
      if (tenant) tenants.set(name, tenant)
    }
  }
  if (problems.length > 0) throw ConfigError.of(problems)
  config.Tenants = tenants
  return config as Config
}

/** $PORT, which overrides Server:Port (as `serve --port` does); refused like a config key when it is no port. */
export function portVariable(variable: string | undefined): number | undefined {
  if (variable === undefined || variable.trim() === '') return undefined
  const port = Number(variable)
  if (!/^\s*\d+\s*$/.test(variable) || port > 65535) throw new ConfigError('PORT', `must be a port from 0 to 65535 (it overrides Server:Port), not '${variable}'`)
  return port
}

function readTenant(name: string, settings: unknown, problems: ConfigError[]): TenantConfig | undefined {
  if (!TENANT_NAME.test(name)) throw new ConfigError(`Tenants:${name}`, 'a tenant name is lower-case letters, digits, - and _, starting with a letter (at most 40)')
  const before = problems.length
  const section = readSection(`Tenants:${name}`, TENANT_KEYS, settings ?? {}, problems) as Record<string, string | undefined> & { Disabled?: boolean; Moving?: boolean }
  if (!section.EncryptionKey) throw new ConfigError(`Tenants:${name}:EncryptionKey`, 'is required (32 random bytes, base64)')
  for (const key of ['EncryptionKey', 'PreviousEncryptionKey'] as const) {
    const value = section[key]
    if (value !== undefined && Buffer.from(value, 'base64').length !== 32) throw new ConfigError(`Tenants:${name}:${key}`, 'must be 32 bytes, base64 encoded')
  }
  checkConnectionString(`Tenants:${name}:ConnectionString`, section.ConnectionString)
  if (problems.length > before) return undefined
  return {
    name,
    Database: section.Database ?? defaultDatabase(name),
    ConnectionString: section.ConnectionString ?? '',
    EncryptionKey: section.EncryptionKey,
    ...(section.PreviousEncryptionKey ? { PreviousEncryptionKey: section.PreviousEncryptionKey } : {}),
    Disabled: section.Disabled === true,
    ...(section.Moving === true ? { Moving: true } : {}),
  }
}

function readSection(where: string, keys: Record<string, KeySpec>, raw: unknown, problems: ConfigError[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    problems.push(new ConfigError(where, 'must be an object'))
    return out
  }
  const given = flattenGroups(raw as Record<string, unknown>, keys)
  for (const key of Object.keys(given)) {
    if (!(key in keys)) problems.push(new ConfigError(`${where}:${key}`, `unknown key; known: ${Object.keys(keys).join(', ')}`))
  }
  for (const [key, spec] of Object.entries(keys)) {
    const value = given[key] ?? spec.default
    try {
      out[key] = value === undefined ? undefined : checkValue(`${where}:${key}`, spec, value)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      problems.push(error)
    }
  }
  return out
}

/** The database a tenant gets when its settings name none: `entityctl_<name>`, - as _ (so `x-y` and `x_y` meet). */
export function defaultDatabase(tenant: string): string {
  return `entityctl_${tenant.replaceAll('-', '_')}`
}

/** The key that signs and verifies access tokens, as bytes: base64url, at least 32 of them. */
/** A shell command that prints a new signing key with the Node that runs entityctl, as install.sh makes one: nothing else to install. */
const MAKE_SIGNING_KEY = `node -e "console.log(require('crypto').randomBytes(32).toString('base64url'))"`

export function jwtSigningKey(jwt: Config['JWT']): Uint8Array {
  if (!jwt.SigningKey) throw new ConfigError('JWT:SigningKey', `is required to serve: at least 32 random bytes, base64url encoded; make one with ${MAKE_SIGNING_KEY} (install.sh writes one into the config it creates)`)
  const key = Buffer.from(jwt.SigningKey, 'base64url')
  if (key.length < 32) throw new ConfigError('JWT:SigningKey', `must be at least 32 bytes, base64url encoded, not ${key.length}`)
  return key
}

/**
 * The keys that verify access tokens besides the signing one (those of before a rotation), as
 * bytes: `JWT:PreviousSigningKeys`, comma-separated, each as SigningKey. A problem names the
 * key by its place, never by its value.
 */
export function jwtPreviousSigningKeys(jwt: Config['JWT']): Uint8Array[] {
  const written = (jwt.PreviousSigningKeys ?? '').split(',').map((key) => key.trim()).filter((key) => key !== '')
  return written.map((value, i) => {
    const key = Buffer.from(value, 'base64url')
    if (key.length < 32) throw new ConfigError('JWT:PreviousSigningKeys', `key ${i + 1} of ${written.length} must be at least 32 bytes, base64url encoded, not ${key.length}`)
    return key
  })
}

/**
 * Connection strings are URLs (databaseUrl() and the driver read them so); the value is a
 * secret, so a problem never quotes it.
 */
function checkConnectionString(key: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') return
  const url = URL.canParse(value) ? new URL(value) : undefined
  if (!url || !/^postgres(ql)?:$/.test(url.protocol)) {
    throw new ConfigError(key, 'must be a PostgreSQL connection string: postgres://user:password@host:5432/database')
  }
}

/** A page of any site sending the browser's credentials is what CORS exists to prevent. */
function checkCors(options: Record<string, unknown>): void {
  const origins = String(options['Cors:AllowedOrigins']).split(',').map((origin) => origin.trim())
  if (options['Cors:AllowCredentials'] === true && origins.includes('*')) {
    throw new ConfigError('ApiOptions:Cors:AllowCredentials', "cannot be true while Cors:AllowedOrigins is '*'; list the origins")
  }
}

/** The head of a request is part of it: its timeout cannot be the longer one. */
function checkTimeouts(server: Config['Server']): void {
  if (server.HeadersTimeoutSeconds > server.RequestTimeoutSeconds) {
    throw new ConfigError('Server:HeadersTimeoutSeconds', `must not exceed Server:RequestTimeoutSeconds (${server.RequestTimeoutSeconds})`)
  }
}

/** Responses carry it as the start of every @odata.context, nextLink and Location: it must be an absolute http(s) URL. */
function checkPublicUrl(value: string | undefined): void {
  if (!value) return
  const url = URL.canParse(value) ? new URL(value) : undefined
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw new ConfigError('Server:PublicUrl', `must be an absolute http or https URL without query or fragment (e.g. https://api.example.com), not '${value}'`)
  }
}

function checkSchedule(housekeeping: Config['Housekeeping']): void {
  if (typeof housekeeping.Schedule === 'string' && !cron.validate(housekeeping.Schedule)) {
    throw new ConfigError('Housekeeping:Schedule', `'${housekeeping.Schedule}' is not a valid cron expression (e.g. '17 * * * *': minute 17 of every hour)`)
  }
}

/**
 * Keys of a group within a section (`ApiOptions:Cors:AllowedOrigins`) are written nested in
 * the file, `"ApiOptions": {"Cors": {"AllowedOrigins": …}}`, and read as `Cors:AllowedOrigins`.
 */
function flattenGroups(given: Record<string, unknown>, keys: Record<string, KeySpec>): Record<string, unknown> {
  const groups = new Set(Object.keys(keys).filter((key) => key.includes(':')).map((key) => key.slice(0, key.indexOf(':'))))
  if (groups.size === 0) return given
  const flat: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(given)) {
    if (groups.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value)) flat[`${key}:${inner}`] = innerValue
    } else {
      flat[key] = value
    }
  }
  return flat
}

function checkValue(key: string, spec: KeySpec, value: unknown): unknown {
  switch (spec.type) {
    case 'boolean':
      if (typeof value === 'boolean') return value
      if (value === 'true' || value === 'false') return value === 'true'
      throw new ConfigError(key, `must be true or false, not ${JSON.stringify(value)}`)
    case 'integer':
    case 'number': {
      const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
      if (typeof number !== 'number' || !Number.isFinite(number) || (spec.type === 'integer' && !Number.isInteger(number))) {
        throw new ConfigError(key, `must be ${spec.type === 'integer' ? 'an integer' : 'a number'}, not ${JSON.stringify(value)}`)
      }
      if ((spec.min !== undefined && number < spec.min) || (spec.max !== undefined && number > spec.max)) {
        throw new ConfigError(key, `must be between ${spec.min} and ${spec.max}, not ${number}`)
      }
      return number
    }
    default:
      if (typeof value !== 'string') throw new ConfigError(key, `must be a string, not ${JSON.stringify(value)}`)
      if (spec.oneOf && !spec.oneOf.includes(value)) throw new ConfigError(key, `must be one of ${spec.oneOf.join(', ')}, not '${value}'`)
      return value
  }
}

/**
 * Env variables override the file. Section and key names match case-insensitively (env
 * names are often upper case); tenant names are taken as written, lower-cased.
 */
function applyEnvironment(raw: Record<string, any>, env: NodeJS.ProcessEnv): Record<string, any> {
  const result: Record<string, any> = structuredClone(raw)
  const sectionNames = [...Object.keys(SECTIONS), 'Tenants']
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.includes('__')) continue
    const parts = name.split('__')
    const section = sectionNames.find((s) => s.toLowerCase() === parts[0].toLowerCase())
    if (!section) continue
    if (section === 'Tenants') {
      if (parts.length !== 3) continue
      const tenant = parts[1].toLowerCase()
      const key = Object.keys(TENANT_KEYS).find((k) => k.toLowerCase() === parts[2].toLowerCase()) ?? parts[2]
      result.Tenants ??= {}
      result.Tenants[tenant] ??= {}
      result.Tenants[tenant][key] = value
      continue
    }
    if (parts.length !== 2 && parts.length !== 3) continue
    const keys = SECTIONS[section as SectionName]
    const written = parts.slice(1).join(':')
    const key = Object.keys(keys).find((k) => k.toLowerCase() === written.toLowerCase()) ?? written
    result[section] ??= {}
    result[section][key] = value
  }
  return result
}

export function projectPath(relative: string): string {
  return isAbsolute(relative) ? relative : join(PROJECT_DIR, relative)
}
