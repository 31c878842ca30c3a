// What several actions need: a tenant name asked for when missing, the validators of
// prompts, and admin errors of the server turned into one-line CLI errors.

import { ServiceError } from '../../server/errors.ts'
import { CliError } from '../cli-error.ts'
import { ask } from '../prompts.ts'

export async function tenantOf(options: { tenant?: string }): Promise<string> {
  return options.tenant ?? (await ask('--tenant', 'Tenant:', nonEmpty))
}

export function nonEmpty(value: string): true | string {
  return value.trim().length > 0 || 'a value is required'
}

export async function adminCall<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    // By name: importing user-admin.ts or tenant-admin.ts here would load them for every command.
    const name = (error as Error)?.name
    if ((error as { usage?: boolean }).usage === true && name === 'TenantAdminError') throw new CliError((error as Error).message, { code: 'UsageError' })
    if (name === 'UserAdminError' || name === 'TenantAdminError') throw new CliError((error as Error).message, { code: /^No /.test((error as Error).message) ? 'NotFound' : 'Failed' })
    if (error instanceof ServiceError) {
      const details = error.details.map((d) => d.message).filter((m) => !error.message.includes(m))
      throw new CliError([error.message, ...details].join('; '), { code: error.code === 'NotFound' ? 'NotFound' : 'Failed' })
    }
    throw error
  }
}
