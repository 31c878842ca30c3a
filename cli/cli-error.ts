// A failure the CLI reports as one readable line (or, with --json, one error object) and a
// documented exit code, never a stack.

/** The exit codes of every command (README "CLI reference"). */
export const EXIT = {
  ok: 0,
  failure: 1,
  /** A mistake in the command line or the configuration: fix the invocation, not the data. */
  usage: 2,
  /** Ctrl-C at a prompt: 128 + SIGINT, as a shell reports a process ended by Ctrl-C. */
  interrupted: 130,
} as const

/** Stable codes of `{"error":{"code","message"}}` (--json). */
export type CliErrorCode =
  | 'Failed'
  | 'UsageError'
  | 'ConfigError'
  | 'PluginError'
  | 'NotFound'
  | 'DatabaseUnreachable'
  | 'Cancelled'
  | 'Interrupted'

export class CliError extends Error {
  readonly exitCode: number
  readonly code: CliErrorCode
  /** More members of the --json error object (`config check`: every problem). */
  readonly extra: Record<string, unknown>
  /** The command printed its own report (`doctor`): only the exit code is left to give. */
  readonly silent: boolean
  constructor(message: string, options: { exitCode?: number; code?: CliErrorCode; extra?: Record<string, unknown>; silent?: boolean } = {}) {
    super(message)
    this.name = 'CliError'
    this.code = options.code ?? 'Failed'
    this.extra = options.extra ?? {}
    this.silent = options.silent ?? false
    this.exitCode = options.exitCode ?? (this.code === 'UsageError' || this.code === 'ConfigError' ? EXIT.usage : EXIT.failure)
  }
}

export function usageError(message: string): CliError {
  return new CliError(message, { code: 'UsageError' })
}
