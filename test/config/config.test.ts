// The config file and its environment overrides (issue 2, item 3): defaults, double
// underscore nesting, and a bad value stopping the start with the key named.

import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { type ConfigError, loadConfig } from '../../server/config/load-config.ts'

const dir = mkdtempSync(join(tmpdir(), 'entityctl-config-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function file(content: unknown): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.json`)
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content))
  return path
}

const KEY = Buffer.alloc(32, 7).toString('base64')

describe('loadConfig', () => {
  it('fills every default', () => {
    const config = loadConfig(file({}), {})
    expect(config.ApiOptions).toMatchObject({ EnableLowerCamelCase: false, MaxTop: 500, MaxNodeCount: 100, MaxExpansionDepth: 5 })
    expect(config.JWT).toMatchObject({ AccessTokenExpirationHours: 0.5, RefreshTokenExpirationDays: 14, Issuer: 'entityctl' })
    expect(config.Workflow).toMatchObject({ IdleTimeoutMinutes: 30, MaxRequests: 200, MaxOpenPerUser: 20 })
    expect(config.Tenants.size).toBe(0)
  })

  it('lets environment variables override nested keys, case-insensitively, and add tenants', () => {
    const config = loadConfig(file({ ApiOptions: { MaxTop: 50 } }), {
      ApiOptions__EnableLowerCamelCase: 'true',
      APIOPTIONS__MAXTOP: '75',
      Tenants__acme__ConnectionString: 'postgres://db/acme',
      Tenants__acme__EncryptionKey: KEY,
      UNRELATED__THING: 'x',
    })
    expect(config.ApiOptions.EnableLowerCamelCase).toBe(true)
    expect(config.ApiOptions.MaxTop).toBe(75)
    expect(config.Tenants.get('acme')).toMatchObject({ ConnectionString: 'postgres://db/acme', Database: 'entityctl_acme' })
  })

  it.each([
    [{ ApiOptions: { MaxTop: 0 } }, {}, 'ApiOptions:MaxTop: must be between 1 and 100000, not 0'],
    [{ ApiOptions: { MaxTop: 'many' } }, {}, 'ApiOptions:MaxTop: must be an integer, not "many"'],
    [{}, { Workflow__MaxOpenPerUser: '0' }, 'Workflow:MaxOpenPerUser: must be between 1 and 100000, not 0'],
    [{}, { ApiOptions__EnableLowerCamelCase: 'yes' }, 'ApiOptions:EnableLowerCamelCase: must be true or false, not "yes"'],
    [{ ApiOptions: { MaxTopp: 1 } }, {}, 'ApiOptions:MaxTopp: unknown key; known: EnableLowerCamelCase'],
    [{ Apioptions: {} }, {}, 'Apioptions: unknown section'],
    [{ ApiOptions: { Cors: { AllowedOrigins: '*', AllowCredentials: true } } }, {}, "ApiOptions:Cors:AllowCredentials: cannot be true while Cors:AllowedOrigins is '*'"],
    [{ ApiOptions: { Cors: { MaxAge: 5 } } }, {}, 'ApiOptions:Cors:MaxAge: unknown key'],
    [{ Server: { LogLevel: 'loud' } }, {}, 'Server:LogLevel: must be one of trace, debug, info'],
    [{ Tenants: { Acme: { EncryptionKey: KEY } } }, {}, 'Tenants:Acme: a tenant name is lower-case'],
    [{ Tenants: { acme: {} } }, {}, 'Tenants:acme:EncryptionKey: is required'],
    [{ Tenants: { acme: { EncryptionKey: 'short' } } }, {}, 'Tenants:acme:EncryptionKey: must be 32 bytes'],
    // What serve reads beyond a key's type: refused with the rest, so config check refuses it as serve does.
    [{ Server: { HeadersTimeoutSeconds: 200 } }, {}, 'Server:HeadersTimeoutSeconds: must not exceed Server:RequestTimeoutSeconds (120)'],
    [{ Server: { TrustedProxies: '10.0.0.0/8, proxy.local' } }, {}, 'Server:TrustedProxies: "proxy.local" is not an IP address or CIDR range'],
    [{}, { Housekeeping__Schedule: 'hourly' }, "Housekeeping:Schedule: 'hourly' is not a valid cron expression"],
    [{ Server: { PublicUrl: 'api.example.com' } }, {}, "Server:PublicUrl: must be an absolute http or https URL without query or fragment (e.g. https://api.example.com), not 'api.example.com'"],
    [{}, { Server__PublicUrl: 'ftp://api.example.com' }, 'Server:PublicUrl: must be an absolute http or https URL'],
  ])('refuses %j %j naming the key', (content, env, message) => {
    expect(() => loadConfig(file(content), env as NodeJS.ProcessEnv)).toThrow(message)
  })

  it('reads a group of keys nested in the file or joined by double underscores in the environment', () => {
    const config = loadConfig(file({ ApiOptions: { Cors: { AllowedOrigins: 'https://a.example', MaxAgeSeconds: 60 } } }), { ApiOptions__Cors__AllowCredentials: 'true' })
    expect(config.ApiOptions['Cors:AllowedOrigins']).toBe('https://a.example')
    expect(config.ApiOptions['Cors:MaxAgeSeconds']).toBe(60)
    expect(config.ApiOptions['Cors:AllowCredentials']).toBe(true)
    expect(loadConfig(file({}), {}).ApiOptions['Cors:AllowedOrigins']).toBe('')
  })

  it('checks the previous signing keys to serve, as it checks the signing key', () => {
    const signing = Buffer.alloc(32, 1).toString('base64url')
    const previous = [Buffer.alloc(32, 2).toString('base64url'), Buffer.alloc(40, 3).toString('base64url')]
    const listed = file({ JWT: { SigningKey: signing, PreviousSigningKeys: previous.join(', ') } })
    expect(loadConfig(listed, {}, { serving: true }).JWT.PreviousSigningKeys).toBe(previous.join(', '))
    expect(loadConfig(file({ JWT: { SigningKey: signing } }), {}, { serving: true }).JWT.PreviousSigningKeys).toBe('')
    const short = file({ JWT: { SigningKey: 'abc', PreviousSigningKeys: `${previous[0]},abcd` } })
    expect(loadConfig(short, {}).JWT.PreviousSigningKeys).toBe(`${previous[0]},abcd`)
    const problems = (() => {
      try {
        loadConfig(short, {}, { serving: true })
      } catch (error) {
        return (error as ConfigError).problems
      }
    })()
    expect(problems).toEqual([
      'Configuration JWT:SigningKey: must be at least 32 bytes, base64url encoded, not 2',
      'Configuration JWT:PreviousSigningKeys: key 2 of 2 must be at least 32 bytes, base64url encoded, not 3',
    ])
    expect(() => loadConfig(file({ JWT: { SigningKey: signing } }), { JWT__PreviousSigningKeys: 'short' }, { serving: true })).toThrow(
      'Configuration JWT:PreviousSigningKeys: key 1 of 1 must be at least 32 bytes',
    )
  })

  it('asks for the signing key only to serve, and refuses a connection string that is no PostgreSQL URL', () => {
    const unsigned = file({})
    expect(loadConfig(unsigned, {}).JWT.SigningKey).toBeUndefined()
    expect(() => loadConfig(unsigned, {}, { serving: true })).toThrow('Configuration JWT:SigningKey: is required to serve')
    // The message says how to make a key, with the Node that runs entityctl, and the key it makes serves.
    const message = (() => {
      try {
        loadConfig(unsigned, {}, { serving: true })
      } catch (error) {
        return (error as Error).message
      }
      return ''
    })()
    const script = /node -e "([^"]+)"/.exec(message)?.[1]
    expect(script, message).toBeDefined()
    const made = execFileSync(process.execPath, ['-e', script!], { encoding: 'utf8' }).trim()
    expect(loadConfig(file({ JWT: { SigningKey: made } }), {}, { serving: true }).Tenants.size).toBe(0)
    expect(() => loadConfig(file({ JWT: { SigningKey: 'abc' } }), {}, { serving: true })).toThrow('Configuration JWT:SigningKey: must be at least 32 bytes, base64url encoded, not 2')
    expect(loadConfig(file({ JWT: { SigningKey: Buffer.alloc(32, 1).toString('base64url') } }), {}, { serving: true }).Tenants.size).toBe(0)
    const problems = (() => {
      try {
        loadConfig(file({ Database: { ConnectionString: 'garbage' }, Tenants: { acme: { EncryptionKey: KEY, ConnectionString: 'http://db/acme' } } }), {})
      } catch (error) {
        return (error as ConfigError).problems
      }
    })()
    expect(problems).toEqual([
      'Configuration Database:ConnectionString: must be a PostgreSQL connection string: postgres://user:password@host:5432/database',
      'Configuration Tenants:acme:ConnectionString: must be a PostgreSQL connection string: postgres://user:password@host:5432/database',
    ])
  })

  it('refuses a file that is not JSON, naming the file', () => {
    const path = file('{ "Server": ')
    expect(() => loadConfig(path, {})).toThrow(`${path}: is not valid JSON`)
  })
})
