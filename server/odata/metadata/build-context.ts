// What the $metadata builders share while turning one model into one CSDL document.

import type { NamingPolicy } from '../../model/naming.ts'
import type { EnumTypes } from './edm-types.ts'

export interface BuildContext {
  readonly namespace: string
  readonly naming: NamingPolicy
  readonly enums: EnumTypes
}

export function qualified(context: BuildContext, name: string): string {
  return `${context.namespace}.${name}`
}
