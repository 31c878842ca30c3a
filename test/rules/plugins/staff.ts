// Departments and their employees, for the tests of plugin code at run time: rules and methods
// that never settle, never return or answer wrong values, computed values read through a reference
// (Employee.DeptName) and from a bare collection (Dept.HeadCount).
import { execFileSync } from 'node:child_process'
import { entity, type FindFunction, method, p, plugin } from 'entityctl/plugin'

const Dept = entity('Dept', {
  properties: {
    Name: p.text(),
    Code: p.text(),
    HeadCount: p.integer(),
    Employees: p.many('Employee').via('Dept'),
  },
  computed: { HeadCount: { from: ['Employees'], value: (dept) => dept.Employees.length } },
  // A block body that forgot its return, for one code: the value would silently vanish.
  corrections: { Code: (code) => (code === 'no return' ? undefined : code) },
  methods: {
    Hangs: method.read('Never answers', { returns: p.integer() }, () => new Promise(() => {})),
    // Blocked outside JavaScript, where nothing can interrupt it.
    Sleeps: method.read('Waits for a slow program', { returns: p.integer() }, () => Number(execFileSync('sleep', ['15']).length)),
    Fails: method.read('Throws', { returns: p.integer() }, () => levelOf('method bug')),
    WrongNumber: method.read('Answers a text for a number', { returns: p.integer() }, () => 'not a number'),
    WrongEntity: method.read('Answers an employee for a department', { returns: p.reference('Dept') }, async (dept, { find }) => (await find('Employee', { Dept: dept.Guid }))[0]),
    WrongList: method.read('Answers one long object for a collection', { returns: p.many('Dept') }, () => ({ Name: 'Research and development', Code: 'RND', Note: 'more than a message shows' })),
  },
})

/** 1, or never returns for the note 'endless': a rule's loop its author did not see end. */
function endless(note: string | null): number {
  while (note === 'endless') {
    // spins, as a loop over data that never changes does
  }
  return 1
}

/** A rule's bug on data its author did not foresee: a level looked up for a note that has none. */
function levelOf(note: string | null): number {
  const levels: Record<string, { level: number }> = { junior: { level: 1 } }
  return note?.endsWith(' bug') ? levels[note].level : 1
}

/** A virtual rule written as stored ones may be: async, searching with find, which it cannot. */
async function colleagues(find: FindFunction): Promise<number> {
  return (await find('Employee')).length
}

/** A Guid no department has: a method's or rule's bug, not its caller's. */
const NO_DEPT = '0190c000-0000-7000-8000-00000000dead'

const Employee = entity('Employee', {
  properties: {
    Name: p.text(),
    Note: p.text(),
    Score: p.integer(),
    Dept: p.reference('Dept').onDelete('setNull'),
    DeptName: p.text().virtual(),
    DeptCode: p.text(),
    Badge: p.integer().virtual(),
  },
  // A default that makes up a department's Guid, for one note: the rule's bug, not the client's.
  defaults: { Dept: (employee) => (employee.Note === 'lost dept' ? NO_DEPT : null) },
  computed: {
    DeptName: { from: ['Dept.Name'], value: (employee) => employee.Dept?.Name ?? null },
    DeptCode: { from: ['Dept.Code'], value: (employee) => employee.Dept?.Code ?? null },
    Badge: {
      from: ['Note'],
      value: (employee, { find }) =>
        employee.Note === 'bad badge' ? 'B-1' : employee.Note === 'badge bug' ? levelOf(employee.Note) : employee.Note === 'badge lookup' ? colleagues(find) : 1,
    },
    Score: { from: ['Note'], value: (employee) => (employee.Note === 'bad score' ? 'abc' : employee.Note === 'huge score' ? 1e12 : employee.Note === 'score bug' ? levelOf(employee.Note) : endless(employee.Note)) },
  },
  validations: {
    // A block body that forgot its return, for one name: no verdict at all.
    Name: (employee) => (employee.Name === 'no verdict' ? (undefined as unknown as true) : true),
    Note: async (employee): Promise<true> => {
      if (employee.Note === 'hang') await new Promise(() => {})
      if (employee.Note === 'refused') throw new Error('notes are checked by hand this week')
      return true
    },
  },
  methods: {
    MoveTo: method.modify('Moves the employee by setting Dept', { params: { dept: p.guid().required() } }, (employee, { dept }) => {
      employee.Dept = dept
    }),
    Misplace: method.modify('Moves the employee to a department of a Guid no department has', (employee) => {
      employee.Dept = NO_DEPT
    }),
  },
})

export default plugin({ entities: [Dept, Employee] })
