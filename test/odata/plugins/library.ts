// Authors and their books, searchable by name, title and summary; notes that are not searchable.
import { entity, p, plugin } from 'entityctl/plugin'

const Author = entity('Author', {
  properties: {
    Name: p.properNoun().required().searchable(),
    Country: p.text(),
    Books: p.many('Book').via('Author'),
  },
})

const Book = entity('Book', {
  properties: {
    Author: p.reference('Author').required(),
    Name: p.text().required().searchable(),
    Summary: p.multilineText().searchable(),
    Pages: p.integer(),
  },
})

const Note = entity('Note', { properties: { Text: p.text() } })

export default plugin({ entities: [Author, Book, Note] })
