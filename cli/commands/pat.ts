import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/pat.ts')

export function patCommand(): Command {
  const pat = new Command('pat').description('Personal access tokens: credentials for scripts, scoped to responsibilities.')
  withJson(
    pat
      .command('issue')
      .description('Issue a PAT for a user and print its secret (shown once). No --responsibility: a full-access fallback PAT, for a full-access user without roles.')
      .option('-t, --tenant <name>', 'tenant')
      .option('-u, --user <name>', 'user name of the owner')
      .option('-n, --name <label>', 'label of the PAT')
      .option('-d, --days <n>', 'days until it expires, 1 to 365')
      .option('-r, --responsibility <name...>', 'responsibilities the PAT may use (the owner must hold them)'),
  ).action(lazy(actions, 'issue'))
  withJson(
    pat
      .command('list')
      .description("List a tenant's PATs (a user's with --user) with owner, scope, expiry and last use; secrets are never shown.")
      .option('-t, --tenant <name>', 'tenant')
      .option('-u, --user <name>', 'only the PATs of this user'),
  ).action(lazy(actions, 'list'))
  withJson(pat.command('revoke <id>').description('Revoke a PAT: refused at once on every server.').option('-t, --tenant <name>', 'tenant')).action(
    lazy(actions, 'revoke'),
  )
  withJson(
    pat
      .command('regenerate <id>')
      .description('Give an active or expired PAT a new secret (printed once) and a new lifetime; the old secret stops working.')
      .option('-t, --tenant <name>', 'tenant'),
  ).action(lazy(actions, 'regenerate'))
  return pat
}
