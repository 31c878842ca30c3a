import { Argument, Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

export function completionCommand(): Command {
  return withJson(
    new Command('completion')
      .description('Print a shell completion script, made from the command tree. bash: `source <(entityctl completion bash)`; zsh: `source <(entityctl completion zsh)` (e.g. in ~/.bashrc or ~/.zshrc).')
      .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh'])),
  ).action(lazy(() => import('../actions/completion.ts'), 'completion'))
}
