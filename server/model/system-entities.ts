// The entities every tenant has besides its plugins' ones: users, roles, responsibilities
// and the links between them. They are declared with the plugin API and served by the same
// OData routes; secrets (password hashes, tokens) live in internal tables, never here.

import { entity, p, plugin } from '../plugin.ts'
import type { LoadedPlugin } from './build-model.ts'
import type { ValidationRule } from './declarations.ts'
import { hasControlCharacter, noControlCharacters } from './control-characters.ts'

const User = entity('User', {
  naturalKey: ['Username'],
  properties: {
    Username: p.text().required().maxLength(100).label('User name'),
    HasFullAccess: p.boolean().label('Full access').description('Passes every permission check'),
    Disabled: p.boolean().label('Disabled').description('A disabled user is refused at once, whatever its tokens say'),
    Roles: p.many('UserRole').via('User'),
  },
  defaults: { HasFullAccess: () => false, Disabled: () => false },
  corrections: { Username: (name) => (typeof name === 'string' ? name.trim() : name) },
  computed: { Title: { from: ['Username'], value: (user) => user.Username } },
  validations: { Username: printableName('Username', 'A user name') },
})

/**
 * A name is typed at sign-in or on the command line and shown in lists, trees and logs
 * (control-characters.ts). One stored before this rule may stay, so that its row can still
 * be disabled, described or renamed.
 */
function printableName(property: string, what: string): ValidationRule {
  return (row, { before }) => {
    const name = row[property]
    return typeof name !== 'string' || !hasControlCharacter(name) || name === before?.[property] || noControlCharacters(what)
  }
}

const Role = entity('Role', {
  setName: 'Roles',
  aliases: ['roles', 'Role'],
  naturalKey: ['Name'],
  properties: {
    Name: p.text().required().maxLength(100).label('Role'),
    Description: p.multilineText(),
    Parent: p.reference('Role').onDelete('restrict').label('Supervisor role'),
    Children: p.many('Role').via('Parent'),
    Responsibilities: p.many('RoleResponsibility').via('Role'),
    Users: p.many('UserRole').via('Role'),
  },
  computed: { Title: { from: ['Name'], value: (role) => role.Name } },
  validations: { Name: printableName('Name', 'A role name') },
})

const Responsibility = entity('Responsibility', {
  setName: 'Responsibilities',
  naturalKey: ['Name'],
  properties: {
    Name: p.text().required().maxLength(100),
    Description: p.multilineText(),
    Permissions: p.multilineText().description('JSON: entity name → permissions, as declared by the plugin'),
    Source: p.text().maxLength(400).description('The plugin file that declares it'),
    Roles: p.many('RoleResponsibility').via('Responsibility'),
  },
  computed: { Title: { from: ['Name'], value: (responsibility) => responsibility.Name } },
  // Plugins declare them, and the loader refuses such a name first (build-model.ts).
  validations: { Name: printableName('Name', 'A responsibility name') },
})

const UserRole = entity('UserRole', {
  naturalKey: ['User', 'Role'],
  properties: {
    User: p.reference('User').required().onDelete('cascade'),
    Role: p.reference('Role').required().onDelete('cascade'),
  },
})

const RoleResponsibility = entity('RoleResponsibility', {
  setName: 'RoleResponsibilities',
  naturalKey: ['Role', 'Responsibility'],
  properties: {
    Role: p.reference('Role').required().onDelete('cascade'),
    Responsibility: p.reference('Responsibility').required().onDelete('cascade'),
  },
})

export const systemPlugin: LoadedPlugin = {
  source: '(system)',
  decl: plugin({ entities: [User, Role, Responsibility, UserRole, RoleResponsibility] }),
}
