// A model for what the demo does not show: every scalar type, a value list that cannot be an
// enumeration type, virtual and encrypted properties, setNull, text that needs escaping,
// generated names that clash with declared ones, and every kind of method signature.

import { buildModel } from '../../../server/model/build-model.ts'
import type { EntityDecl, PluginDecl } from '../../../server/model/declarations.ts'
import type { Model } from '../../../server/model/model.ts'
import { entity, method, p, plugin } from '../../../server/plugin.ts'

export const NASTY_TEXT = 'Line 1\nLine 2 <b>&</b> "quoted" \'single\'\ttab\u0001bell'

const Ticket = entity('Ticket', {
  label: 'Support ticket',
  description: 'A <customer> request & its "state"',
  properties: {
    Subject: p.text().required().maxLength(200).label('Subject').description(NASTY_TEXT),
    Stage: p.enumeration('In progress', 'Done'),
    Priority: p.enumeration('Low', 'High').required(),
    Score: p.double().min(0.5).max(9.5),
    Effort: p.decimal(5, 1).min(0).max(100),
    Secret: p.text().encrypted(),
    Age: p.integer().virtual(),
    Due: p.dateTime(),
    At: p.timeOfDay(),
    Flag: p.boolean(),
    External: p.guid(),
    Owner: p.reference('Agent').onDelete('setNull').label('Owner'),
    Notes: p.many('Note').via('Ticket').description('Comments, oldest first'),
  },
  computed: { Age: { from: ['Due'], value: () => 1 } },
  methods: {
    Escalate: method.modify(
      'Raises the priority',
      {
        params: {
          reason: p.text().maxLength(100).description('Why'),
          level: p.enumeration('One', 'Two').required(),
          notify: { ...p.boolean().decl, default: true },
          times: p.integer().required().min(1),
        },
        returns: p.reference('Ticket'),
      },
      () => undefined,
    ),
    Similar: method.read('Tickets like this one', { returns: p.many('Note') }, () => []),
    Ping: method.read('Answers nothing', () => undefined),
    Purge: method.modify('Deletes old tickets', { static: true }, () => undefined),
  },
})

const Agent = entity('Agent', {
  properties: {
    Name: p.text(),
    Tickets: p.many('Ticket').via('Owner'),
    Watched: p.many('Ticket').via('Owner'),
  },
})

const Note = entity('Note', {
  properties: {
    Ticket: p.reference('Ticket').required().onDelete('cascade'),
    Text: p.multilineText(),
  },
})

// Names the builder would have generated: the enumeration of Ticket.Priority and the container.
const TicketPriority = entity('TicketPriority', { properties: { Rank: p.integer() } })
const Container = entity('Container', { setName: 'Containers', properties: {} })

export function fixtureModel(...extra: EntityDecl[]): Model {
  return modelOf({ entities: [Ticket, Agent, Note, TicketPriority, Container, ...extra] })
}

export function modelOf(decl: PluginDecl): Model {
  return buildModel([{ source: 'fixture.ts', decl: plugin(decl) }])
}
