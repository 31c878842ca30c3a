// $filter through the HTTP API on the test plugins: every operator, function, navigation
// path and lambda, each case checked against the rows the reference evaluation selects
// (reference.ts), not only the status.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Employee } from '../../fixtures/dataset.ts'
import { data, discriminating, expectValue, filterCase, type QueryCase } from './cases.ts'
import { startQueryServer, type QueryServer } from './query-server.ts'
import { eq, fn, ge, gt, le, LEVELS, lift, lt, ne } from './reference.ts'

const { employees: E, flights: F, airports: A, departments: D, orders: O, customers: C, lines: L, products: P } = data

const emp = (filter: string, predicate: (e: Employee) => boolean) => filterCase('Employees', E, filter, predicate)
const flight = (filter: string, predicate: (f: (typeof F)[number]) => boolean) => filterCase('Flights', F, filter, predicate)
const airport = (filter: string, predicate: (a: (typeof A)[number]) => boolean) => filterCase('Airports', A, filter, predicate)
const department = (filter: string, predicate: (d: (typeof D)[number]) => boolean) => filterCase('Departments', D, filter, predicate)
const order = (filter: string, predicate: (o: (typeof O)[number]) => boolean) => filterCase('Orders', O, filter, predicate)
const customer = (filter: string, predicate: (c: (typeof C)[number]) => boolean) => filterCase('Customers', C, filter, predicate)
const line = (filter: string, predicate: (l: (typeof L)[number]) => boolean) => filterCase('OrderLines', L, filter, predicate)

const add = lift((a: number, b: number) => a + b)
const sub = lift((a: number, b: number) => a - b)
const mul = lift((a: number, b: number) => a * b)
const idiv = lift((a: number, b: number) => Math.trunc(a / b))
const div = lift((a: number, b: number) => a / b)
const mod = lift((a: number, b: number) => a % b)
const utc = (text: string) => new Date(text).toISOString()

const [ada, grace, alan, zoe, , jose, lei, linus, , ken] = E
const robin = E[27]
const eng = D[1]

const comparisons: QueryCase[] = [
  emp(`Age eq ${alan.Age}`, (e) => eq(e.Age, alan.Age)),
  emp(`Age ne ${alan.Age}`, (e) => ne(e.Age, alan.Age)),
  emp('Age gt 40', (e) => gt(e.Age, 40)),
  emp('Age ge 57', (e) => ge(e.Age, 57)),
  emp('Age lt 26', (e) => lt(e.Age, 26)),
  emp('Age le 26', (e) => le(e.Age, 26)),
  emp('Age eq null', (e) => e.Age === null),
  emp('Age ne null', (e) => e.Age !== null),
  emp('null eq Age', (e) => e.Age === null),
  emp('40 lt Age', (e) => gt(e.Age, 40)),
  emp('Salary gt 150000.5', (e) => gt(e.Salary, 150000.5)),
  emp('Salary le 60000', (e) => le(e.Salary, 60000)),
  emp('Salary eq null', (e) => e.Salary === null),
  emp(`Salary eq ${grace.Salary}`, (e) => eq(e.Salary, grace.Salary)),
  emp('Rating gt 2.5', (e) => gt(e.Rating, 2.5)),
  emp('Rating lt 0', (e) => lt(e.Rating, 0)),
  emp('Rating ge -1.5', (e) => ge(e.Rating, -1.5)),
  emp('Rating eq 0', (e) => eq(e.Rating, 0)),
  emp('Rating eq 2', (e) => eq(e.Rating, 2)),
  emp('Rating gt 3e0', (e) => gt(e.Rating, 3)),
  emp('Rating lt 4.999E0', (e) => lt(e.Rating, 4.999)),
  emp('Rating eq 4.999', (e) => eq(e.Rating, 4.999)),
  emp("Name eq 'Ada Lovelace'", (e) => e.Name === 'Ada Lovelace'),
  emp("Name eq 'Seán O''Brien'", (e) => e.Name === "Seán O'Brien"),
  emp("Name eq '李雷'", (e) => e.Name === '李雷'),
  emp("Name gt 'M'", (e) => gt(e.Name, 'M')),
  emp("Name lt 'B'", (e) => lt(e.Name, 'B')),
  emp("Name ge 'Zoë'", (e) => ge(e.Name, 'Zoë')),
  emp("Name ne 'Ada Lovelace'", (e) => e.Name !== 'Ada Lovelace'),
  emp('Nickname eq null', (e) => e.Nickname === null),
  emp('Nickname ne null', (e) => e.Nickname !== null),
  emp("Nickname eq ''", (e) => e.Nickname === ''),
  emp("Nickname eq '100%'", (e) => e.Nickname === '100%'),
  emp("Nickname eq 'O''Neil'", (e) => e.Nickname === "O'Neil"),
  emp("Nickname ne 'ken'", (e) => e.Nickname !== 'ken'),
  emp('Active eq true', (e) => e.Active),
  emp('Active eq false', (e) => !e.Active),
  emp('Active ne true', (e) => !e.Active),
  emp('Active', (e) => e.Active),
  emp('not Active', (e) => !e.Active),
  emp('HireDate gt 2015-01-01', (e) => gt(e.HireDate, '2015-01-01')),
  emp('HireDate le 2004-12-31', (e) => le(e.HireDate, '2004-12-31')),
  emp('HireDate eq null', (e) => e.HireDate === null),
  emp(`HireDate eq ${ada.HireDate}`, (e) => e.HireDate === ada.HireDate),
  emp('LastLogin gt 2024-06-01T00:00:00Z', (e) => gt(e.LastLogin, utc('2024-06-01T00:00:00Z'))),
  emp('LastLogin lt 2024-03-02T16:00:00+05:00', (e) => lt(e.LastLogin, utc('2024-03-02T16:00:00+05:00'))),
  emp('LastLogin ge 2024-03-02T13:23:36.000-00:00', (e) => ge(e.LastLogin, utc('2024-03-02T13:23:36Z'))),
  emp('LastLogin eq null', (e) => e.LastLogin === null),
  emp(`LastLogin eq ${ken.LastLogin}`, (e) => e.LastLogin === ken.LastLogin),
  // A Date meets a DateTimeOffset at midnight UTC, whatever the database session's zone.
  emp('LastLogin ge 2024-02-11', (e) => ge(e.LastLogin, '2024-02-11T00:00:00.000Z')),
  emp('LastLogin lt 2024-02-11', (e) => lt(e.LastLogin, '2024-02-11T00:00:00.000Z')),
  emp('StartTime lt 08:00:00', (e) => lt(e.StartTime, '08:00:00')),
  emp('StartTime eq 10:45:00', (e) => e.StartTime === '10:45:00'),
  emp('StartTime ge 10:00', (e) => ge(e.StartTime, '10:00:00')),
  emp("StartTime gt '09:00:00'", (e) => gt(e.StartTime, '09:00:00')),
  emp("Level eq 'Senior'", (e) => e.Level === 'Senior'),
  emp("Level ne 'Senior'", (e) => e.Level !== 'Senior'),
  emp('Level eq null', (e) => e.Level === null),
  emp("Level eq entityctl.EmployeeLevel'Lead'", (e) => e.Level === 'Lead'),
  emp("Level has entityctl.EmployeeLevel'Principal'", (e) => e.Level === 'Principal'),
  emp("Level has 'Junior'", (e) => e.Level === 'Junior'),
  // A member by its value (the ABNF's enumMemberValue; $metadata gives each its Value), typed or not.
  emp("Level eq entityctl.EmployeeLevel'2'", (e) => e.Level === 'Lead'),
  emp("Level in ('0',entityctl.EmployeeLevel'3')", (e) => e.Level === 'Junior' || e.Level === 'Principal'),
  emp("Level ge entityctl.EmployeeLevel'1'", (e) => ge(LEVELS(e.Level), 2)),
  // Enumeration members compare by their value (declaration order), not by name.
  emp("Level gt 'Senior'", (e) => gt(LEVELS(e.Level), 2)),
  emp("Level le entityctl.EmployeeLevel'Senior'", (e) => le(LEVELS(e.Level), 2)),
  emp("Manager/Level ge 'Lead'", (e) => ge(LEVELS(e.Manager?.Level ?? null), 3)),
  emp('Level lt Manager/Level', (e) => lt(LEVELS(e.Level), LEVELS(e.Manager?.Level ?? null))),
  emp(`Guid eq ${lei.Guid}`, (e) => e === lei),
  emp(`Guid ne ${lei.Guid}`, (e) => e !== lei),
  emp(`ManagerGuid eq ${ada.Guid}`, (e) => e.Manager === ada),
  emp('MentorGuid eq null', (e) => e.Mentor === null),
  emp(`DepartmentGuid eq '${eng.Guid}'`, (e) => e.Department === eng),
]

const logic: QueryCase[] = [
  emp('Age gt 30 and Active', (e) => gt(e.Age, 30) && e.Active),
  emp('Age gt 60 or Age lt 25', (e) => gt(e.Age, 60) || lt(e.Age, 25)),
  emp('not (Age gt 30)', (e) => !gt(e.Age, 30)),
  emp('not (Age gt 30) and Active', (e) => !gt(e.Age, 30) && e.Active),
  emp('Active and (Age lt 30 or Age gt 60)', (e) => e.Active && (lt(e.Age, 30) || gt(e.Age, 60))),
  emp('Age gt 55 or Age lt 25 and Active', (e) => gt(e.Age, 55) || (lt(e.Age, 25) && e.Active)),
  emp('(Age gt 55 or Age lt 25) and Active', (e) => (gt(e.Age, 55) || lt(e.Age, 25)) && e.Active),
  emp('not Active or Age gt 50', (e) => !e.Active || gt(e.Age, 50)),
  emp('not not Active', (e) => e.Active),
  emp('not (Nickname eq null)', (e) => e.Nickname !== null),
  emp("not (Nickname eq 'ken') and not (Level eq null)", (e) => e.Nickname !== 'ken' && e.Level !== null),
  emp('((Age gt 40))', (e) => gt(e.Age, 40)),
  emp('Age gt 30 and Age lt 50 and Active eq false', (e) => gt(e.Age, 30) && lt(e.Age, 50) && !e.Active),
  emp('Rating gt 3 or Rating lt -2 or Rating eq null', (e) => gt(e.Rating, 3) || lt(e.Rating, -2) || e.Rating === null),
  emp(`Age in (${alan.Age}, ${lei.Age}, 99)`, (e) => [alan.Age, lei.Age, 99].includes(e.Age as number)),
  emp("Name in ('Ada Lovelace','李雷','Nobody')", (e) => ['Ada Lovelace', '李雷'].includes(e.Name)),
  emp("Level in ('Junior','Lead')", (e) => e.Level === 'Junior' || e.Level === 'Lead'),
  emp(`Guid in (${ada.Guid},${zoe.Guid})`, (e) => e === ada || e === zoe),
  emp('HireDate in (2016-11-03, 2004-02-24)', (e) => ['2016-11-03', '2004-02-24'].includes(e.HireDate as string)),
  emp('not (Age in (22, 59))', (e) => ![22, 59].includes(e.Age as number)),
]

const arithmetic: QueryCase[] = [
  emp('Age add 5 gt 60', (e) => gt(add(e.Age, 5), 60)),
  emp('Age sub 5 lt 20', (e) => lt(sub(e.Age, 5), 20)),
  emp(`Age mul 2 eq ${(alan.Age as number) * 2}`, (e) => eq(mul(e.Age, 2), (alan.Age as number) * 2)),
  emp('Age div 2 eq 11', (e) => eq(idiv(e.Age, 2), 11)),
  emp('Age mod 2 eq 1', (e) => eq(mod(e.Age, 2), 1)),
  emp('Age mod 7 eq 0', (e) => eq(mod(e.Age, 7), 0)),
  emp('Age divby 4 gt 14.5', (e) => gt(div(e.Age, 4), 14.5)),
  emp('Salary mul 2 gt 300000', (e) => gt(mul(e.Salary, 2), 300000)),
  emp('Salary div 12 gt 10000', (e) => gt(div(e.Salary, 12), 10000)),
  emp('Salary mod 1000 gt 500', (e) => gt(mod(e.Salary, 1000), 500)),
  emp('Rating mul 2 eq 9', (e) => eq(mul(e.Rating, 2), 9)),
  emp('Rating add 0.5 gt 3', (e) => gt(add(e.Rating, 0.5), 3)),
  emp('Rating mod 2 eq 0.5', (e) => eq(mod(e.Rating, 2), 0.5)),
  emp('Rating mod 2 eq -0.5', (e) => eq(mod(e.Rating, 2), -0.5)),
  emp('Rating div 2 lt -0.7', (e) => lt(div(e.Rating, 2), -0.7)),
  emp('-Age lt -60', (e) => lt(e.Age === null ? null : -e.Age, -60)),
  emp('-Rating gt 1', (e) => gt(e.Rating === null ? null : -e.Rating, 1)),
  emp('- Rating ge 2.5', (e) => ge(e.Rating === null ? null : -e.Rating, 2.5)),
  emp('Age add 1 mul 2 gt 62', (e) => gt(add(e.Age, 2), 62)),
  emp('(Age add 1) mul 2 gt 62', (e) => gt(mul(add(e.Age, 1), 2), 62)),
  emp('Age sub 10 sub 10 gt 30', (e) => gt(sub(sub(e.Age, 10), 10), 30)),
  emp('Age sub (10 sub 10) gt 30', (e) => gt(e.Age, 30)),
  emp('Age add Age gt 100', (e) => gt(add(e.Age, e.Age), 100)),
  emp('Salary gt Age mul 3000', (e) => gt(e.Salary, mul(e.Age, 3000))),
  emp('Age mul Rating gt 100', (e) => gt(mul(e.Age, e.Rating), 100)),
  emp('100 sub Age ge 60', (e) => ge(sub(100, e.Age), 60)),
]

const strings: QueryCase[] = [
  emp("contains(Name,'an')", (e) => fn.contains(e.Name, 'an')),
  emp("contains(Nickname,'%')", (e) => fn.contains(e.Nickname, '%')),
  emp("contains(Nickname,'_')", (e) => fn.contains(e.Nickname, '_')),
  emp("contains(Nickname,'\\')", (e) => fn.contains(e.Nickname, '\\')),
  emp("contains(Nickname,'a%b')", (e) => fn.contains(e.Nickname, 'a%b')),
  emp("contains(Name,'')", (e) => fn.contains(e.Name, '')),
  emp("startswith(Name,'A')", (e) => fn.startswith(e.Name, 'A')),
  emp("startswith(Nickname,'50%')", (e) => fn.startswith(e.Nickname, '50%')),
  // A literal prefix is also a range on the column (compile-expression.ts, startsWith).
  emp("startswith(Name,'')", (e) => fn.startswith(e.Name, '')),
  emp("startswith(Name,'Al')", (e) => fn.startswith(e.Name, 'Al')),
  emp("startswith(Name,'Z')", (e) => fn.startswith(e.Name, 'Z')),
  emp("startswith(Name,'Jö')", (e) => fn.startswith(e.Name, 'Jö')),
  emp("startswith(Name,'J\u{10FFFF}')", (e) => fn.startswith(e.Name, 'J\u{10FFFF}')),
  emp("not startswith(Nickname,'A')", (e) => !fn.startswith(e.Nickname, 'A')),
  emp("endswith(Name,'son')", (e) => fn.endswith(e.Name, 'son')),
  emp("endswith(Nickname,'_c')", (e) => fn.endswith(e.Nickname, '_c')),
  emp("not contains(Name,'e')", (e) => !fn.contains(e.Name, 'e')),
  emp('contains(Name,Nickname)', (e) => fn.contains(e.Name, e.Nickname)),
  emp('startswith(Name,Nickname)', (e) => fn.startswith(e.Name, e.Nickname)),
  emp('endswith(Name,Nickname)', (e) => fn.endswith(e.Name, e.Nickname)),
  emp("contains(Name,'ö')", (e) => fn.contains(e.Name, 'ö')),
  emp('length(Name) gt 14', (e) => gt(fn.length(e.Name), 14)),
  emp('length(Nickname) eq 0', (e) => eq(fn.length(e.Nickname), 0)),
  emp('length(Name) eq 2', (e) => eq(fn.length(e.Name), 2)),
  emp("indexof(Name,'a') eq 1", (e) => eq(fn.indexof(e.Name, 'a'), 1)),
  emp("indexof(Name,'z') eq -1", (e) => eq(fn.indexof(e.Name, 'z'), -1)),
  emp("indexof(Name,'ö') ge 0", (e) => ge(fn.indexof(e.Name, 'ö'), 0)),
  emp("substring(Name,0,3) eq 'Ada'", (e) => fn.substring(e.Name, 0, 3) === 'Ada'),
  emp("substring(Name,5) eq 'Lovelace'", (e) => fn.substring(e.Name, 5) === 'Lovelace'),
  emp("substring(Name,1,2) eq 'in'", (e) => fn.substring(e.Name, 1, 2) === 'in'),
  emp("substring(Name,1) eq 'oë Åström'", (e) => fn.substring(e.Name, 1) === 'oë Åström'),
  // A negative start counts from the end (URL Conventions 4.01 §5.1.1.7.4), and is 0 at most that far back.
  emp("substring(Name,-8) eq 'Lovelace'", (e) => fn.substring(e.Name, -8) === 'Lovelace'),
  emp("substring(Name,-8,4) eq 'Love'", (e) => fn.substring(e.Name, -8, 4) === 'Love'),
  emp("substring(Name,-100,3) eq 'Ada'", (e) => fn.substring(e.Name, -100, 3) === 'Ada'),
  emp("tolower(Name) eq 'ada lovelace'", (e) => fn.tolower(e.Name) === 'ada lovelace'),
  emp("tolower(Name) eq 'zoë åström'", (e) => fn.tolower(e.Name) === 'zoë åström'),
  emp("toupper(Name) eq 'JOSÉ NÚÑEZ'", (e) => fn.toupper(e.Name) === 'JOSÉ NÚÑEZ'),
  emp("tolower(Nickname) eq 'mixed'", (e) => fn.tolower(e.Nickname) === 'mixed'),
  emp("toupper(Nickname) eq 'MATZ'", (e) => fn.toupper(e.Nickname) === 'MATZ'),
  emp("contains(tolower(Name),'ö')", (e) => fn.contains(fn.tolower(e.Name), 'ö')),
  emp("trim(Nickname) eq 'spaced'", (e) => fn.trim(e.Nickname) === 'spaced'),
  emp('length(trim(Nickname)) lt length(Nickname)', (e) => lt(fn.length(fn.trim(e.Nickname)), fn.length(e.Nickname))),
  emp("concat(Name,'!') eq 'Ada Lovelace!'", (e) => fn.concat(e.Name, '!') === 'Ada Lovelace!'),
  emp("concat(concat(Name,' '),Nickname) eq 'Ken Thompson ken'", (e) => fn.concat(fn.concat(e.Name, ' '), e.Nickname) === 'Ken Thompson ken'),
  emp("concat(Nickname,Nickname) eq 'JSJS'", (e) => fn.concat(e.Nickname, e.Nickname) === 'JSJS'),
  emp("matchesPattern(Name,'^[A-D]')", (e) => fn.matchespattern(e.Name, '^[A-D]')),
  emp("matchespattern(Nickname,'[0-9]')", (e) => fn.matchespattern(e.Nickname, '[0-9]')),
  emp("MatchesPattern(Name,'son$')", (e) => fn.matchespattern(e.Name, 'son$')),
  emp("matchesPattern(Name,'^[^ ]+ [^ ]+ [^ ]+$')", (e) => fn.matchespattern(e.Name, '^[^ ]+ [^ ]+ [^ ]+$')),
  // ECMAScript's \b is a word boundary (ARE's \y), POSIX classes are ARE's: both as the README says.
  emp("matchesPattern(Name,'\\bLo')", (e) => fn.matchespattern(e.Name, '\\bLo')),
  emp("matchesPattern(Name,'a\\B')", (e) => fn.matchespattern(e.Name, 'a\\B')),
  emp("matchesPattern(Name,'^[[:upper:]][[:lower:]]+ [[:upper:]][[:lower:]]+$')", (e) => fn.matchespattern(e.Name, '^[A-Z][a-z]+ [A-Z][a-z]+$')),
  emp("matchesPattern(Name,'\\x41[a-z]{2,3}\\s')", (e) => fn.matchespattern(e.Name, '\\x41[a-z]{2,3}\\s')),
  emp("CONTAINS(Name,'an')", (e) => fn.contains(e.Name, 'an')),
]

const temporal: QueryCase[] = [
  emp(`year(HireDate) eq ${jose.HireDate!.slice(0, 4)}`, (e) => eq(fn.year(e.HireDate), Number(jose.HireDate!.slice(0, 4)))),
  emp('year(HireDate) ge 2015', (e) => ge(fn.year(e.HireDate), 2015)),
  emp('month(HireDate) eq 11', (e) => eq(fn.month(e.HireDate), 11)),
  emp('day(HireDate) lt 10', (e) => lt(fn.day(e.HireDate), 10)),
  emp('year(LastLogin) eq 2024', (e) => eq(fn.year(e.LastLogin), 2024)),
  emp('month(LastLogin) eq 12', (e) => eq(fn.month(e.LastLogin), 12)),
  emp(`day(LastLogin) eq ${fn.day(grace.LastLogin)}`, (e) => eq(fn.day(e.LastLogin), fn.day(grace.LastLogin))),
  emp('hour(LastLogin) ge 20', (e) => ge(fn.hour(e.LastLogin), 20)),
  emp('hour(LastLogin) lt 3', (e) => lt(fn.hour(e.LastLogin), 3)),
  emp('minute(LastLogin) lt 15', (e) => lt(fn.minute(e.LastLogin), 15)),
  emp(`second(LastLogin) eq ${fn.second(ken.LastLogin)}`, (e) => eq(fn.second(e.LastLogin), fn.second(ken.LastLogin))),
  emp('fractionalseconds(LastLogin) gt 0.5', (e) => gt(fn.fractionalseconds(e.LastLogin), 0.5)),
  emp('fractionalseconds(LastLogin) eq 0', (e) => eq(fn.fractionalseconds(e.LastLogin), 0)),
  emp('hour(StartTime) eq 10', (e) => eq(fn.hour(e.StartTime), 10)),
  emp('minute(StartTime) eq 30', (e) => eq(fn.minute(e.StartTime), 30)),
  emp('second(StartTime) gt 30', (e) => gt(fn.second(e.StartTime), 30)),
  emp(`date(LastLogin) eq ${ada.LastLogin!.slice(0, 10)}`, (e) => eq(fn.date(e.LastLogin), ada.LastLogin!.slice(0, 10))),
  emp('date(LastLogin) lt 2024-03-01', (e) => lt(fn.date(e.LastLogin), '2024-03-01')),
  // 2024-02-10T21:39Z is already the 11th in Kolkata, the database session's zone.
  emp('date(LastLogin) eq 2024-02-10', (e) => eq(fn.date(e.LastLogin), '2024-02-10')),
  emp('time(LastLogin) lt 06:00:00', (e) => lt(fn.time(e.LastLogin), '06:00:00')),
  emp('time(LastLogin) ge 20:00:00', (e) => ge(fn.time(e.LastLogin), '20:00:00')),
  emp('LastLogin lt now()', (e) => e.LastLogin !== null),
  emp('HireDate lt now()', (e) => e.HireDate !== null),
  emp('LastLogin gt mindatetime()', (e) => e.LastLogin !== null),
  emp('LastLogin lt maxdatetime()', (e) => e.LastLogin !== null),
  emp('totaloffsetminutes(LastLogin) eq 0', (e) => e.LastLogin !== null),
  // A literal's parts are those of its own offset (URL Conventions 5.1.1.7), not of its UTC time.
  emp('totaloffsetminutes(2024-01-01T02:00:00+05:00) eq 300 and Age gt 50', (e) => gt(e.Age, 50)),
  emp('totaloffsetminutes(2024-01-01T02:00:00-03:30) eq -210 and Age gt 50', (e) => gt(e.Age, 50)),
  emp('hour(2024-01-01T23:00:00-05:00) eq 23 and Age gt 50', (e) => gt(e.Age, 50)),
  emp('date(2024-01-01T02:00:00+05:00) eq 2024-01-01 and day(2024-01-01T02:00:00+05:00) eq 1 and Age gt 50', (e) => gt(e.Age, 50)),
  emp('time(2024-01-01T02:30:00+05:00) eq 02:30:00 and year(2024-01-01T02:00:00Z) eq 2024 and Age gt 50', (e) => gt(e.Age, 50)),
  emp('date(LastLogin) ge date(2024-03-02T02:00:00+05:00)', (e) => ge(fn.date(e.LastLogin), '2024-03-02')),
  emp('year(LastLogin) eq year(HireDate) add 1', (e) => eq(fn.year(e.LastLogin), add(fn.year(e.HireDate), 1))),
  emp('HireDate lt LastLogin', (e) => lt(e.HireDate, e.LastLogin)),
]

const math: QueryCase[] = [
  emp('round(Rating) eq 3', (e) => eq(fn.round(e.Rating), 3)),
  emp('round(Rating) eq -2', (e) => eq(fn.round(e.Rating), -2)),
  emp('round(Rating) eq -3', (e) => eq(fn.round(e.Rating), -3)),
  emp('floor(Rating) eq -2', (e) => eq(fn.floor(e.Rating), -2)),
  emp('ceiling(Rating) eq -1', (e) => eq(fn.ceiling(e.Rating), -1)),
  emp('ceiling(Rating) eq 5', (e) => eq(fn.ceiling(e.Rating), 5)),
  emp('round(Salary) gt 150000', (e) => gt(fn.round(e.Salary), 150000)),
  emp(`floor(Salary div 1000) eq ${Math.floor(grace.Salary! / 1000)}`, (e) => eq(fn.floor(div(e.Salary, 1000)), Math.floor(grace.Salary! / 1000))),
  emp('ceiling(Age divby 10) eq 4', (e) => eq(fn.ceiling(div(e.Age, 10)), 4)),
  emp('round(Age divby 10) eq 3', (e) => eq(fn.round(div(e.Age, 10)), 3)),
  emp('round(Salary divby 1000) eq 86', (e) => eq(fn.round(div(e.Salary, 1000)), 86)),
]

const casts: QueryCase[] = [
  emp(`cast(Age,Edm.String) eq '${alan.Age}'`, (e) => eq(e.Age === null ? null : String(e.Age), String(alan.Age))),
  emp("startswith(cast(HireDate,Edm.String),'20')", (e) => fn.startswith(e.HireDate, '20')),
  emp("cast(Active,Edm.String) eq 'false'", (e) => !e.Active),
  emp('cast(Age,Edm.Double) gt 40.5', (e) => gt(e.Age, 40.5)),
  emp('cast(Age,Edm.Decimal) divby 8 eq 7.125', (e) => eq(div(e.Age, 8), 7.125)),
  emp(`cast(LastLogin,Edm.String) eq '${ken.LastLogin}'`, (e) => e === ken),
  emp(`cast(LastLogin,Edm.Date) eq ${linus.LastLogin!.slice(0, 10)}`, (e) => eq(fn.date(e.LastLogin), linus.LastLogin!.slice(0, 10))),
  emp('isof(Age,Edm.Int32)', () => true),
  emp('isof(Name,Edm.Int32)', () => false),
  emp('isof(Name,Edm.String) and Age gt 50', (e) => gt(e.Age, 50)),
  emp(`cast('${alan.Age}',Edm.Int32) eq Age`, (e) => e.Age === alan.Age),
  // A value that does not convert is null (URL Conventions 5.1.1.10.1), never a database error.
  emp('cast(Name,Edm.Int32) eq null and Age gt 50', (e) => gt(e.Age, 50)),
  emp("cast('2024-02-30',Edm.Date) eq null and Age gt 50", (e) => gt(e.Age, 50)),
  emp("cast('99999999999',Edm.Int32) eq null and Age gt 50", (e) => gt(e.Age, 50)),
  emp('cast(Salary,Edm.Int32) gt 150000', (e) => gt(fn.round(e.Salary), 150000)),
  emp('cast(cast(Salary,Edm.String),Edm.Decimal) gt 150000.5', (e) => gt(e.Salary, 150000.5)),
  emp('cast(cast(Rating,Edm.String),Edm.Double) gt 2.5', (e) => gt(e.Rating, 2.5)),
  emp('cast(cast(HireDate,Edm.String),Edm.Date) gt 2015-01-01', (e) => gt(e.HireDate, '2015-01-01')),
  emp('cast(cast(LastLogin,Edm.String),Edm.DateTimeOffset) gt 2024-06-01T00:00:00Z', (e) => gt(e.LastLogin, utc('2024-06-01T00:00:00Z'))),
  emp('cast(cast(StartTime,Edm.String),Edm.TimeOfDay) lt 08:00:00', (e) => lt(e.StartTime, '08:00:00')),
  emp("cast(cast(Active,Edm.String),Edm.Boolean) and Age gt 50", (e) => e.Active && gt(e.Age, 50)),
  emp('cast(cast(Guid,Edm.String),Edm.Guid) eq Guid and Age gt 50', (e) => gt(e.Age, 50)),
  emp('cast(HireDate,Edm.DateTimeOffset) lt 2015-01-01T00:00:00Z', (e) => lt(e.HireDate, '2015-01-01')),
  emp('time(HireDate) eq 00:00:00', (e) => e.HireDate !== null),
  // A null argument takes the parameter's type.
  emp('year(null) eq 2024 or Age gt 50', (e) => gt(e.Age, 50)),
  emp('hour(null) eq 1 or fractionalseconds(null) eq 0 or Age gt 50', (e) => gt(e.Age, 50)),
  emp("concat(null,Name) eq null and contains(Name,null) eq null and Age gt 50", (e) => gt(e.Age, 50)),
  emp('round(null) eq null and cast(null,Edm.Int32) eq null and Age gt 50', (e) => gt(e.Age, 50)),
  emp('cast(null,Edm.Int32) eq Age', (e) => e.Age === null),
]

const navigation: QueryCase[] = [
  emp("Manager/Name eq 'Ada Lovelace'", (e) => e.Manager === ada),
  emp("Manager/Manager/Name eq 'Ada Lovelace'", (e) => e.Manager?.Manager === ada),
  emp("Manager/Manager/Manager/Name eq 'Ada Lovelace'", (e) => e.Manager?.Manager?.Manager === ada),
  emp("Manager/Manager/Manager/Manager/Name eq 'Ada Lovelace'", (e) => e.Manager?.Manager?.Manager?.Manager === ada),
  emp('Manager/Age gt 50', (e) => gt(e.Manager?.Age, 50)),
  emp("Department/Code eq 'ENG'", (e) => e.Department?.Code === 'ENG'),
  emp("Department/Code eq 'R&D'", (e) => e.Department?.Code === 'R&D'),
  emp('Department/Budget gt 1000000', (e) => gt(e.Department?.Budget, 1000000)),
  emp('Department/Budget eq null', (e) => e.Department === null || e.Department.Budget === null),
  emp("Manager/Department/Code eq 'EXEC'", (e) => e.Manager?.Department?.Code === 'EXEC'),
  emp("Mentor/Name eq 'Ada Lovelace' and Manager/Name eq 'Grace Hopper'", (e) => e.Mentor === ada && e.Manager === grace),
  emp('Mentor/Name eq Manager/Name', (e) => eq(e.Mentor?.Name, e.Manager?.Name)),
  emp('Mentor/Age gt Manager/Age', (e) => gt(e.Mentor?.Age, e.Manager?.Age)),
  emp('Manager eq null', (e) => e.Manager === null),
  emp('Manager ne null', (e) => e.Manager !== null),
  emp('null ne Department', (e) => e.Department !== null),
  emp('Mentor eq null and Manager ne null', (e) => e.Mentor === null && e.Manager !== null),
  emp('Manager/Manager eq null', (e) => e.Manager === null || e.Manager.Manager === null),
  emp('Manager/Manager eq null and Manager ne null', (e) => e.Manager !== null && e.Manager.Manager === null),
  emp('Department/Name eq null', (e) => e.Department === null),
  emp('Manager/Nickname ne null', (e) => e.Manager !== null && e.Manager.Nickname !== null),
  emp("Manager/Level eq 'Lead'", (e) => e.Manager?.Level === 'Lead'),
  emp("Manager/Manager/Department/Name eq 'Executive'", (e) => e.Manager?.Manager?.Department?.Name === 'Executive'),
  emp(`Manager/Guid eq ${grace.Guid}`, (e) => e.Manager === grace),
  emp(`Manager/ManagerGuid eq ${ada.Guid}`, (e) => e.Manager?.Manager === ada),
  emp('Manager/Salary lt Salary', (e) => lt(e.Manager?.Salary, e.Salary)),
  emp("contains(Manager/Name,'a') and not contains(Name,'a')", (e) => fn.contains(e.Manager?.Name ?? null, 'a') && !fn.contains(e.Name, 'a')),
  emp('Manager/Active eq false', (e) => e.Manager?.Active === false),
  emp(`$it/Manager/Name eq 'Robin Milner'`, (e) => e.Manager === robin),
]

const lambdas: QueryCase[] = [
  emp('Reports/any()', (e) => e.Reports.length > 0),
  emp('not Reports/any()', (e) => e.Reports.length === 0),
  emp('Reports/any(r:r/Age gt 60)', (e) => e.Reports.some((r) => gt(r.Age, 60))),
  emp('Reports/all(r:r/Active)', (e) => e.Reports.every((r) => r.Active)),
  emp('Reports/all(r:r/Age gt 30)', (e) => e.Reports.every((r) => gt(r.Age, 30))),
  emp('Reports/any() and Reports/all(r:r/Age gt 30)', (e) => e.Reports.length > 0 && e.Reports.every((r) => gt(r.Age, 30))),
  emp('Reports/any(r:r/Reports/any(s:s/Active eq false))', (e) => e.Reports.some((r) => r.Reports.some((s) => !s.Active))),
  emp('Reports/any(r:r/Reports/any(s:s/Age gt $it/Age))', (e) => e.Reports.some((r) => r.Reports.some((s) => gt(s.Age, e.Age)))),
  emp('Reports/any(r:r/Age gt $it/Age)', (e) => e.Reports.some((r) => gt(r.Age, e.Age))),
  emp('Reports/all(r:r/Salary lt $it/Salary)', (e) => e.Reports.every((r) => lt(r.Salary, e.Salary))),
  emp("Reports/any(r:r/Mentor/Name eq 'Ada Lovelace')", (e) => e.Reports.some((r) => r.Mentor === ada)),
  emp("Reports/any(r:r/Level eq 'Junior') and Active", (e) => e.Reports.some((r) => r.Level === 'Junior') && e.Active),
  emp('Reports/any(r: r/Age gt 40 and r/Nickname eq null)', (e) => e.Reports.some((r) => gt(r.Age, 40) && r.Nickname === null)),
  emp("Flights/any(f:f/Status eq 'Cancelled')", (e) => e.Flights.some((f) => f.Status === 'Cancelled')),
  emp("Flights/any(f:f/From/Country eq 'DE')", (e) => e.Flights.some((f) => f.From.Country === 'DE')),
  emp('Flights/all(f:f/From/Country ne f/To/Country)', (e) => e.Flights.every((f) => ne(f.From.Country, f.To.Country))),
  emp('Department/Employees/any(x:x/Age gt 65)', (e) => (e.Department?.Employees ?? []).some((x) => gt(x.Age, 65))),
  emp('Manager/Reports/any(x:x/Name ne $it/Name and x/Age eq $it/Age)', (e) => (e.Manager?.Reports ?? []).some((x) => x !== e && eq(x.Age, e.Age))),
  emp('Mentees/all(m:m/Manager/Name eq $it/Name)', (e) => e.Mentees.every((m) => m.Manager === e)),
  emp('Reports/any(r:r/Mentees/any())', (e) => e.Reports.some((r) => r.Mentees.length > 0)),
  emp('Reports/$count gt 1', (e) => e.Reports.length > 1),
  emp('Reports/$count eq 0', (e) => e.Reports.length === 0),
  emp('Mentees/$count ge 2', (e) => e.Mentees.length >= 2),
  emp('Reports/$count($filter=Active) ge 2', (e) => e.Reports.filter((r) => r.Active).length >= 2),
  emp('Department/Employees/$count gt 8', (e) => (e.Department?.Employees.length ?? 0) > 8),
  emp('Flights/$count eq 0 and Reports/$count eq 0', (e) => e.Flights.length === 0 && e.Reports.length === 0),
  emp('Reports/$count add Mentees/$count gt 3', (e) => e.Reports.length + e.Mentees.length > 3),
  emp('Reports/any(r:r/Reports/$count gt 1)', (e) => e.Reports.some((r) => r.Reports.length > 1)),
  emp('Reports/$count($filter=Age gt $it/Age) ge 1', (e) => e.Reports.some((r) => gt(r.Age, e.Age))),
  emp('$this/Age gt 60', (e) => gt(e.Age, 60)),
]

const others: QueryCase[] = [
  flight("From/Code eq 'FRA'", (f) => f.From.Code === 'FRA'),
  flight("To/Country eq 'DE'", (f) => f.To.Country === 'DE'),
  flight('From/Country eq To/Country', (f) => eq(f.From.Country, f.To.Country)),
  flight('From/Country ne To/Country', (f) => ne(f.From.Country, f.To.Country)),
  flight("From/Code eq 'FRA' or To/Code eq 'FRA'", (f) => f.From.Code === 'FRA' || f.To.Code === 'FRA'),
  flight(`Pilot/Name eq '${F[0].Pilot!.Name.replaceAll("'", "''")}'`, (f) => f.Pilot === F[0].Pilot),
  flight('Pilot eq null', (f) => f.Pilot === null),
  flight("Pilot/Manager/Name eq 'Robin Milner'", (f) => f.Pilot?.Manager === robin),
  flight("Status eq 'Cancelled'", (f) => f.Status === 'Cancelled'),
  flight('Status eq null', (f) => f.Status === null),
  flight("Status in ('Boarding','Departed')", (f) => f.Status === 'Boarding' || f.Status === 'Departed'),
  flight('Price gt 500', (f) => gt(f.Price, 500)),
  flight('Price eq null', (f) => f.Price === null),
  flight('Minutes divby 60 gt 5', (f) => f.Minutes / 60 > 5),
  flight('Minutes div 60 eq 5', (f) => Math.trunc(f.Minutes / 60) === 5),
  flight('Departure gt 2024-06-15T00:00:00Z', (f) => gt(f.Departure, '2024-06-15T00:00:00.000Z')),
  flight('hour(Departure) lt 6', (f) => lt(fn.hour(f.Departure), 6)),
  flight('minute(Departure) eq 45', (f) => eq(fn.minute(f.Departure), 45)),
  flight("From/City eq 'München'", (f) => f.From.City === 'München'),
  flight("To/City eq 'Nowhere''s Ville'", (f) => f.To.City === "Nowhere's Ville"),
  flight("contains(To/City,'ō')", (f) => fn.contains(f.To.City, 'ō')),
  flight('Departure ge 2024-03-31T22:00:00-02:00', (f) => ge(f.Departure, utc('2024-03-31T22:00:00-02:00'))),
  flight("From/Departures/$count gt 5 and Status ne 'Cancelled'", (f) => f.From.Departures.length > 5 && f.Status !== 'Cancelled'),
  flight('Pilot/Flights/$count gt 4', (f) => (f.Pilot?.Flights.length ?? 0) > 4),
  airport("Departures/any(f:f/Status eq 'Cancelled')", (a) => a.Departures.some((f) => f.Status === 'Cancelled')),
  airport('Arrivals/$count gt 5', (a) => a.Arrivals.length > 5),
  airport('Departures/all(f:f/Price gt 300)', (a) => a.Departures.every((f) => gt(f.Price, 300))),
  airport('Departures/any(f:f/Pilot/Age gt 60)', (a) => a.Departures.some((f) => gt(f.Pilot?.Age, 60))),
  airport("Country in ('DE','FR')", (a) => a.Country === 'DE' || a.Country === 'FR'),
  airport('Country eq null', (a) => a.Country === null),
  airport('Arrivals/any(f:f/From/Country eq $it/Country)', (a) => a.Arrivals.some((f) => eq(f.From.Country, a.Country))),
  department('Employees/any(e:e/Manager eq null)', (d) => d.Employees.some((e) => e.Manager === null)),
  department('Employees/$count eq 0', (d) => d.Employees.length === 0),
  department('Budget eq 0', (d) => d.Budget === 0),
  department('Budget eq null', (d) => d.Budget === null),
  department("Code eq 'R&D'", (d) => d.Code === 'R&D'),
  department("Name eq 'Languages ''n'' Tools'", (d) => d.Name === "Languages 'n' Tools"),
  department('Employees/all(e:e/Salary gt 50000)', (d) => d.Employees.every((e) => gt(e.Salary, 50000))),
  order('Lines/$count gt 3', (o) => o.Lines.length > 3),
  order('Lines/any(l:l/Quantity gt 8)', (o) => o.Lines.some((l) => l.Quantity > 8)),
  order('Lines/all(l:l/UnitPrice ne null)', (o) => o.Lines.every((l) => l.UnitPrice !== null)),
  order("Lines/any(l:l/Product/Category eq 'Tools')", (o) => o.Lines.some((l) => l.Product.Category === 'Tools')),
  order("Customer/Country eq 'DE'", (o) => o.Customer.Country === 'DE'),
  order('Customer/CreditLimit eq null', (o) => o.Customer.CreditLimit === null),
  order('Total gt 300', (o) => gt(o.Total, 300)),
  order('Status eq null', (o) => o.Status === null),
  order('OrderDate eq null', (o) => o.OrderDate === null),
  order('month(OrderDate) eq 7', (o) => eq(fn.month(o.OrderDate), 7)),
  order('Lines/any(l:l/LineTotal gt $it/Total div 2)', (o) => o.Lines.some((l) => gt(l.LineTotal, div(o.Total, 2)))),
  order('Customer/Orders/$count gt 5', (o) => o.Customer.Orders.length > 5),
  order("Lines/any(l:l/Order/Customer/Country eq 'FR')", (o) => o.Lines.length > 0 && o.Customer.Country === 'FR'),
  order("Status eq 'Open' and Lines/$count ge 5 and Customer/Country ne 'DE'", (o) => o.Status === 'Open' && o.Lines.length >= 5 && o.Customer.Country !== 'DE'),
  customer("Orders/any(o:o/Lines/any(l:l/Product/Code eq 'DRILL-X'))", (c) => c.Orders.some((o) => o.Lines.some((l) => l.Product.Code === 'DRILL-X'))),
  customer("Orders/all(o:o/Status eq 'Closed')", (c) => c.Orders.every((o) => o.Status === 'Closed')),
  customer("contains(Name,'_')", (c) => c.Name.includes('_')),
  customer("contains(Name,'%')", (c) => c.Name.includes('%')),
  customer("startswith(Email,'info@')", (c) => fn.startswith(c.Email, 'info@')),
  customer('Email eq null', (c) => c.Email === null),
  customer("endswith(Email,'.de')", (c) => fn.endswith(c.Email, '.de')),
  customer("Name eq 'O''Reilly & Sons'", (c) => c.Name === "O'Reilly & Sons"),
  line("Order/Customer/Country eq 'US'", (l) => l.Order.Customer.Country === 'US'),
  line('Product/Price gt 20 and Quantity ge 5', (l) => l.Product.Price > 20 && l.Quantity >= 5),
  line('UnitPrice mul Quantity eq LineTotal', (l) => eq(l.UnitPrice === null ? null : Math.round(l.UnitPrice * l.Quantity * 100) / 100, l.LineTotal)),
  line('UnitPrice eq null', (l) => l.UnitPrice === null),
  line('Product/Price ne UnitPrice', (l) => ne(l.Product.Price, l.UnitPrice)),
  filterCase('Products', P, "Category eq null or Category eq 'Tools'", (p) => p.Category === null || p.Category === 'Tools'),
]

const aliasesAndOptionNames: QueryCase[] = [
  filterCase('Employees', E, 'Age gt @a', (e) => gt(e.Age, 40), { '@a': '40' }),
  filterCase('Employees', E, 'Name eq @n', (e) => e.Name === 'Ada Lovelace', { '@n': "'Ada Lovelace'" }),
  filterCase('Employees', E, 'Age gt @low and Age lt @high', (e) => gt(e.Age, 30) && lt(e.Age, 50), { '@low': '30', '@high': '50' }),
  filterCase('Employees', E, 'Level in @levels', (e) => e.Level === 'Junior' || e.Level === 'Lead', { '@levels': "('Junior','Lead')" }),
  filterCase('Employees', E, 'contains(Name,@part)', (e) => e.Name.includes('an'), { '@part': "'an'" }),
  filterCase('Employees', E, 'Manager/Name eq @boss', (e) => e.Manager === ada, { '@boss': "'Ada Lovelace'" }),
  filterCase('Employees', E, 'Nickname eq @n', (e) => e.Nickname === null, { '@n': 'null' }),
  // An alias the query gives no value is null (OData 4.01 Part 1, Parameter Aliases).
  filterCase('Employees', E, 'Nickname eq @unset', (e) => e.Nickname === null),
  filterCase('Employees', E, 'Age gt 60 or @unset', (e) => gt(e.Age, 60)),
  { path: `Employees?filter=${encodeURIComponent('Age gt 60')}`, expected: filterCase('Employees', E, 'x', (e) => gt(e.Age, 60)).expected },
  { path: `Employees?$FILTER=${encodeURIComponent('Age gt 60')}`, expected: filterCase('Employees', E, 'x', (e) => gt(e.Age, 60)).expected },
  { path: `Employees?$Filter=${encodeURIComponent('Age gt 60 or Active eq false')}`, expected: filterCase('Employees', E, 'x', (e) => gt(e.Age, 60) || !e.Active).expected },
  { path: `Employees?$filter=${encodeURIComponent("Name EQ 'Ada Lovelace' OR Age GT 65")}`, expected: filterCase('Employees', E, 'x', (e) => e.Name === 'Ada Lovelace' || gt(e.Age, 65)).expected },
  { path: `Employees?$filter=${encodeURIComponent('Reports/ANY(r:r/Age gt 60)')}`, expected: filterCase('Employees', E, 'x', (e) => e.Reports.some((r) => gt(r.Age, 60))).expected },
  { path: "Employees?$filter=Manager/Name%20eq%20'Ada%20Lovelace'", expected: filterCase('Employees', E, 'x', (e) => e.Manager === ada).expected },
  { path: 'Employees?$filter=LastLogin%20lt%202024-03-02T16:00:00+05:00', expected: filterCase('Employees', E, 'x', (e) => lt(e.LastLogin, utc('2024-03-02T16:00:00+05:00'))).expected },
]

const FILTER_CASES = [...comparisons, ...logic, ...arithmetic, ...strings, ...temporal, ...math, ...casts, ...navigation, ...lambdas, ...others, ...aliasesAndOptionNames]

let server: QueryServer
beforeAll(async () => {
  server = await startQueryServer()
})
afterAll(async () => {
  await server?.stop()
})

describe('$filter', () => {
  it('has cases that select some rows but not all', () => {
    const totals: Record<string, number> = { Employees: E.length, Flights: F.length, Airports: A.length, Departments: D.length, Orders: O.length, Customers: C.length, OrderLines: L.length, Products: P.length }
    const useful = discriminating(FILTER_CASES, (path) => totals[path.split('?')[0]])
    expect(useful / FILTER_CASES.length).toBeGreaterThan(0.85)
  })

  it.each(FILTER_CASES.map((c) => [decodeURIComponent(c.path), c] as const))('%s', async (_, queryCase) => {
    await expectValue(server, queryCase)
  })
})
