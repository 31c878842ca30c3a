import { Command } from 'commander'
import { lazy, withJson } from '../lazy.ts'

const actions = () => import('../actions/tenant.ts')
const keys = () => import('../actions/tenant-keys.ts')
const transfer = () => import('../actions/tenant-transfer.ts')

export function tenantCommand(): Command {
  const tenant = new Command('tenant').description(
    'Manage tenants: each has its own database. Running servers follow the config file without a restart: a command that changes it returns once every server connected to the database server has applied the change (the others see it within a second or two).',
  )
  withJson(
    tenant
      .command('add [name]')
      .description('Create a tenant: its database, its schema, and its entry in the config file (created if missing). An existing database of that name is reused: give its key with --encryption-key-file.')
      .option('--encryption-key-file <file>', 'the EncryptionKey of kept data (the file `tenant remove --export-key` or `tenant backup` wrote); default: a new key'),
  ).action(lazy(actions, 'add'))
  withJson(tenant.command('list').description('List the tenants of the config file.')).action(lazy(actions, 'list'))
  withJson(
    tenant
      .command('remove [name]')
      .description('Remove a tenant and drop its database (asks first). With --keep-database the key must be kept too: --export-key FILE, or on a terminal it is printed.')
      .option('-y, --yes', 'do not ask for confirmation')
      .option('--keep-database', 'remove the tenant from the config but keep its database')
      .option('--export-key <file>', 'with --keep-database: write the tenant\'s EncryptionKey to this file (mode 600) first: `tenant add --encryption-key-file` reattaches the kept database with it'),
  ).action(lazy(actions, 'remove'))
  withJson(
    tenant
      .command('disable <name>')
      .description('Refuse the tenant\'s requests (401) and close its connections on every running server, keeping its data.'),
  ).action(lazy(actions, 'disable'))
  withJson(tenant.command('enable <name>').description('Serve a disabled tenant again.')).action(lazy(actions, 'enable'))
  withJson(
    tenant
      .command('rotate-key <name>')
      .description('Give the tenant a new EncryptionKey: every encrypted value is re-encrypted under it in one transaction, the canary too, and the config file updated. Running servers hold both keys before the re-encryption and the new one alone when it returns, so none fails a request. Back up the new key (`tenant backup`).'),
  ).action(lazy(keys, 'rotateKey'))
  withJson(
    tenant
      .command('backup <name>')
      .description('Write the tenant\'s data to one file (gzip; the rows of every table as of one moment) and its EncryptionKey beside it (FILE.key, mode 600). Keep the two apart, and both safe.')
      .option('-o, --out <file>', 'the backup file (default: <name>-<UTC date and time>.entityctl-backup in the current folder)'),
  ).action(lazy(transfer, 'backup'))
  withJson(
    tenant
      .command('restore <file>')
      .description('Create a tenant from a backup: a new database, the schema of the plugins, the rows checked table by table against the file, and the backup\'s key in the config file.')
      .requiredOption('--as <name>', 'name of the new tenant')
      .option('--encryption-key-file <file>', 'the backup\'s key file (default: <file>.key)'),
  ).action(lazy(transfer, 'restore'))
  withJson(
    tenant
      .command('move <name>')
      .description('Copy the tenant to another database (on another server or the same), check every table, and point its config entry there. Running servers answer the tenant 503 meanwhile; the copy starts once no session is left on its database. The old database is kept.')
      .requiredOption('--to <connection>', 'connection string of the target database, e.g. postgres://user:password@host:5432/acme (created if missing; must hold no tables)'),
  ).action(lazy(transfer, 'move'))
  return tenant
}
