// Commands import only what they use: the command tree (names, options, help) is built from
// commander alone, and each action imports its implementation (cli/actions/*) when it runs,
// so `entityctl --help` never loads the server.

import type { Command } from 'commander'

type Action = (...args: any[]) => unknown

/** An action that imports `module` and calls its export `name` with commander's arguments. */
export function lazy<M, K extends keyof M>(module: () => Promise<M>, name: K): (...args: any[]) => Promise<void> {
  return async (...args) => {
    await ((await module())[name] as Action)(...args)
  }
}

/** --json, which every command takes. */
export function withJson(command: Command): Command {
  return command.option('--json', 'print the result, or the error, as JSON on stdout')
}
