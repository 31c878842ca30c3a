// A lending library whose methods do more than change the entities they hold: they refuse a
// call the business does not allow, lend a book by creating a loan, and take a book out of the
// catalogue by deleting it (its loans cascade, its reviews restrict).
import { entity, method, p, plugin } from 'entityctl/plugin'

/** How many copies of a book the library keeps: a donation past it is refused. */
const COPIES_KEPT = 4

const Book = entity('Book', {
  properties: {
    Name: p.text().required().maxLength(60),
    Available: p.boolean(),
    LoanCount: p.integer(),
    Loans: p.many('Loan').via('Book'),
    Reviews: p.many('Review').via('Book'),
  },
  defaults: { Available: () => true },
  computed: { LoanCount: { from: ['Loans'], value: (book) => book.Loans.length } },
  methods: {
    Lend: method.modify(
      'Lends the book to a reader',
      { params: { reader: p.text().required(), days: p.integer().min(1).max(60) }, returns: p.reference('Loan') },
      (book, { reader, days, create, refuse }) => {
        if (!book.Available) refuse(`${book.Name} is not available`)
        book.Available = false
        return create('Loan', { Book: book, Reader: reader, Days: days ?? 14 })
      },
    ),
    Withdraw: method.modify('Takes the book out of the catalogue, with its loans', (book, { remove }) => {
      remove(book)
    }),
    Donate: method.modify(
      'Adds copies of a book, as long as the shelves hold them',
      { static: true, params: { name: p.text().required(), copies: p.integer().required().min(1) }, returns: p.many('Book') },
      async ({ name, copies }, { create, find, refuse }) => {
        const added = []
        for (let copy = 0; copy < copies; copy++) added.push(create('Book', { Name: name }))
        // Counted once they are added: find sees what this call created.
        const kept = (await find('Book', { Name: name })).length
        if (kept > COPIES_KEPT) refuse(`The library keeps ${COPIES_KEPT} copies of ${name}; ${copies} more would make ${kept}`, 'copies')
        return added
      },
    ),
    Misdonate: method.modify('Creates a book its rules refuse', { static: true }, (_params, { create }) => {
      create('Book', { Name: 'x'.repeat(61) })
    }),
    Named: method.read(
      'Books of a name',
      { static: true, params: { name: p.text() }, returns: p.many('Book') },
      ({ name }, { find, refuse }) => (name ? find('Book', { Name: name }) : refuse('Give a name to look for', 'name')),
    ),
    Entrust: method.modify(
      'Gives a reader full access: what the plugin may do, its caller may grant only with full access',
      { static: true, params: { username: p.text().required() } },
      async ({ username }, { find }) => {
        for (const user of await find('User', { Username: username })) user.HasFullAccess = true
      },
    ),
    Misfind: method.read('Finds an entity type no plugin declares', { static: true, returns: p.integer() }, async (_params, { find }) =>
      (await find('Bok')).length,
    ),
    Sneak: method.read('A read method that creates a book', { static: true }, (_params, { create }) => {
      create('Book', { Name: 'Sneaked' })
    }),
    Vanish: method.read('A read method that deletes its book', (book, { remove }) => {
      remove(book)
    }),
  },
})

const Loan = entity('Loan', {
  properties: {
    Book: p.reference('Book').required().onDelete('cascade'),
    Reader: p.text().required().maxLength(40),
    Days: p.integer().min(1),
    Since: p.date(),
  },
  defaults: { Since: (_loan, { today }) => today },
  corrections: { Reader: (reader) => (typeof reader === 'string' ? reader.trim() : reader) },
  methods: {
    Return: method.modify('Gives the book back: the loan ends', async (loan, { find, remove }) => {
      const [book] = await find('Book', { Guid: loan.Book.Guid })
      book.Available = true
      remove(loan)
    }),
  },
})

const Review = entity('Review', {
  properties: {
    Book: p.reference('Book').required().onDelete('restrict'),
    Stars: p.integer().min(1).max(5),
  },
})

export default plugin({
  entities: [Book, Loan, Review],
  responsibilities: {
    Lending: { description: 'Lend books, and nothing else', permissions: { Book: ['read', 'execute:Lend', 'execute:Withdraw', 'execute:Donate', 'execute:Entrust'], Loan: ['read'] } },
  },
})
