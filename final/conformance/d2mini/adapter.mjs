// The conformance oracle's line protocol, spoken by d2mini.
//
// d2mini (@electric-sql/d2mini) is d2ts without versions: its README calls it
// "simplified and without the complexities of multi-dimensional versioning";
// an input takes a change (sendData) and graph.run() brings the output up to
// date with every change sent so far. So this adapter does what this project's
// stage v2 driver does (drive.py, _unversioned): it keeps each
// version's updates back until every input's frontier has passed the version,
// then feeds the versions one after another, in order, each followed by
// graph.run(), and labels what comes out with that version. Versions that are
// pairs are fed the same way when the case's versions form a chain; a case
// with two incomparable versions is unsupported (one change after another
// cannot keep [0, 1] out of [1, 0]). The output frontier follows the versions
// fed: once every version the inputs' frontiers have passed is fed, the output
// at those versions is complete, so the output frontier is the least element
// of the inputs' frontiers ([] at the end). See ../README.md, 'The protocol an
// engine speaks', and REPORT.md beside this file.
//
// The oracle runs it from its install in a user cache folder, beside the pinned
// @electric-sql/d2mini (`--engine d2mini`, or `--engine 'd2mini --workarounds'`):
//
//   node adapter.mjs                 the programs written with d2mini's own operators
//   node adapter.mjs --workarounds   d2mini's count, filterBy, antiJoin, leftJoin and distinct
//                                    replaced by constructions from its other operators,
//                                    to look past the findings in REPORT.md
//
// A graph still working after D2MINI_ADAPTER_MAX_SECONDS (default 5) on one
// version answers {"error"}, rather than running into the checker's timeout.

import { createInterface } from 'node:readline'
import {
  D2,
  MultiSet,
  antiJoin,
  concat,
  count,
  distinct,
  filter,
  filterBy,
  innerJoin,
  leftJoin,
  map,
  negate,
  output,
  reduce,
} from '@electric-sql/d2mini'

const WORKAROUNDS = process.argv.includes('--workarounds')
const MAX_SECONDS = Number(process.env.D2MINI_ADAPTER_MAX_SECONDS || 5)

// -- records -------------------------------------------------------------------
//
// Records arrive as JSON values (arrays are tuples, null is NULL). d2mini's
// keyed operators (join, reduce, count) file keys and values in JavaScript
// Maps, which compare arrays by identity, so every key enters d2mini as its
// JSON text (what d2mini's own groupBy does with its keys) and is parsed back
// when it leaves. Values stay as they are: an equal array read from another
// line is another Map entry, whose updates still add up to the same output.

const enc = (key) => JSON.stringify(key)
const dec = (text) => JSON.parse(text)

/** A total order on records: numbers, then strings, then tuples (lexicographically); null and booleans first. */
function compare(a, b) {
  const rank = (x) => (x === null ? 0 : typeof x === 'boolean' ? 1 : typeof x === 'number' ? 2 : typeof x === 'string' ? 3 : 4)
  const ra = rank(a)
  const rb = rank(b)
  if (ra !== rb) return ra - rb
  if (ra === 1 || ra === 2) return Number(a) - Number(b)
  if (ra === 3) return a < b ? -1 : a > b ? 1 : 0 // strings of the cases are ASCII: code units are code points
  if (ra === 4) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compare(a[i], b[i])
      if (c !== 0) return c
    }
    return a.length - b.length
  }
  return 0
}

/**
 * A reduce function's input as [value, multiplicity] with each value once and no zero.
 * d2mini's index keeps a value per Map entry, so equal arrays from different lines come
 * as separate entries (an insert and its retraction among them); every reduction here
 * consolidates them by their JSON text first.
 */
function consolidated(values) {
  const totals = new Map()
  for (const [value, multiplicity] of values) {
    const text = JSON.stringify(value)
    const entry = totals.get(text)
    if (entry) entry[1] += multiplicity
    else totals.set(text, [value, multiplicity])
  }
  return [...totals.values()].filter(([, multiplicity]) => multiplicity !== 0)
}

/** The values present (positive multiplicity) in a reduce function's input. */
const present = (values) => consolidated(values).filter(([, multiplicity]) => multiplicity > 0).map(([value]) => value)

const length = (string) => [...string].length // code points, as Python's len
// What Python's str.split() splits on (the catalog's word_count says "as Python's str.split()"):
// JavaScript's \s differs, taking U+FEFF and leaving U+001C to U+001F and U+0085 in words.
const WHITESPACE = /[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u
const words = (line) => line.split(WHITESPACE).filter((word) => word.length > 0)

// -- building blocks ---------------------------------------------------------------

/** [key, value] records to d2mini's keyed form: the key as its JSON text. */
const keyed = () => map(([key, value]) => [enc(key), value])
/** Back from d2mini's keyed form. */
const unkeyed = () => map(([key, value]) => [dec(key), value])

/**
 * Each record r with accumulated multiplicity m becomes the records of produce(r),
 * each [value, n] with multiplicity n * m. d2mini has no flat_map and no operator
 * that sets a multiplicity, so this is a reduce keyed by the record itself.
 */
function expand(produce) {
  return (stream) =>
    stream.pipe(
      map((record) => [enc(record), record]),
      reduce((values) => {
        const out = []
        for (const [record, multiplicity] of consolidated(values)) {
          for (const [value, n] of produce(record)) {
            if (n * multiplicity !== 0) out.push([value, n * multiplicity])
          }
        }
        return out
      }),
      map(([, value]) => value),
    )
}

/** A keyed count: d2mini's count(), or (with --workarounds) a reduce that gives no record for a key that has none. */
function countByKey() {
  if (!WORKAROUNDS) return count()
  return reduce((values) => {
    let total = 0
    for (const [, multiplicity] of values) total += multiplicity
    return total === 0 ? [] : [[total, 1]]
  })
}

/**
 * distinct over any records: d2mini's distinct(), which tells records apart by a 32-bit hash
 * of their JSON text, or (with --workarounds) a reduce keyed by the record's JSON text itself.
 */
function distinctRecords() {
  if (!WORKAROUNDS) return distinct()
  return (stream) =>
    stream.pipe(
      map((record) => [enc(record), null]),
      reduce((values) => {
        let total = 0
        for (const [, multiplicity] of values) total += multiplicity
        return total > 0 ? [[null, 1]] : []
      }),
      map(([record]) => dec(record)),
    )
}

/**
 * The keys of a stream of plain keys, as d2mini's keyed form [enc(key), null], for filterBy and
 * antiJoin: each key with its multiplicity, as the operators' documentation invites ("by keys of
 * another stream"), or (with --workarounds) each present key once.
 */
function keysOf(keys) {
  const pairs = keys.pipe(map((key) => [enc(key), null]))
  return WORKAROUNDS ? pairs.pipe(distinctRecords(), map(([key]) => [key, null])) : pairs
}

/**
 * left (keyed) records whose key is among keys (plain), each with its multiplicity: d2mini's filterBy,
 * or (with --workarounds) its inner join with each present key once, and the key's null dropped
 * again by a map (filterBy ends in a consolidate() that takes 1 and "1" for the same value).
 */
function semijoinKeyed(left, keys) {
  if (!WORKAROUNDS) return left.pipe(filterBy(keysOf(keys)))
  return left.pipe(
    innerJoin(keysOf(keys)),
    map(([key, [value]]) => [key, value]),
  )
}

/**
 * SQL's LEFT JOIN of keyed streams whose null keys (enc(null)) match nothing: [key, [a, b or null]].
 * d2mini's leftJoin, or (with --workarounds) its inner join plus its antiJoin against the right
 * side's keys, each once.
 */
function leftOuterJoinKeyed(left, right) {
  const usable = right.pipe(filter(([key]) => key !== enc(null)))
  if (!WORKAROUNDS) return left.pipe(leftJoin(usable))
  const matched = left.pipe(innerJoin(usable))
  const unmatched = left.pipe(antiJoin(keysOf(usable.pipe(map(([key]) => dec(key))))))
  return matched.pipe(concat(unmatched))
}

// -- the programs ----------------------------------------------------------------

const NO_ITERATE =
  "d2mini has no iterate operator (its README: d2ts 'simplified and without the complexities of " +
  "multi-dimensional versioning'), and a loop built by hand from an output fed back into an input " +
  "would have no round counter, which document 002 ('v3', 'v4') shows a loop over changing input needs"

const NO_VERSIONS =
  "d2mini has no versions: its output appears when its input changes, so an output that appears at " +
  "versions computed from the data (document 000's join_function and temporal filters) cannot be written"

const PROGRAMS = {
  word_count: ([lines]) =>
    lines.pipe(
      expand((line) => words(line).map((word) => [word, 1])),
      map((word) => [enc(word), null]),
      countByKey(),
      unkeyed(),
    ),

  count_by_key: ([records]) => records.pipe(keyed(), countByKey(), unkeyed()),

  sum_by_key: ([records]) =>
    records.pipe(
      keyed(),
      reduce((values) => {
        const rows = consolidated(values)
        if (rows.length === 0) return []
        const numbers = rows.filter(([value]) => value !== null)
        const sum = numbers.length === 0 ? null : numbers.reduce((total, [value, m]) => total + value * m, 0)
        return [[sum, 1]]
      }),
      unkeyed(),
    ),

  distinct: ([records]) => records.pipe(distinctRecords()),

  join: ([left, right]) => left.pipe(keyed(), innerJoin(right.pipe(keyed())), unkeyed()),

  semijoin: ([left, keys]) => semijoinKeyed(left.pipe(keyed()), keys).pipe(unkeyed()),

  antijoin: ([left, keys]) =>
    left.pipe(
      keyed(),
      antiJoin(keysOf(keys)),
      map(([key, [value]]) => [dec(key), value]),
    ),

  left_outer_join: ([left, right]) => leftOuterJoinKeyed(left.pipe(keyed()), right.pipe(keyed())).pipe(unkeyed()),

  reachability: NO_ITERATE,
  connected_components: NO_ITERATE,
  geometric_series: NO_ITERATE,
  add_one_squares: NO_ITERATE,
  noop_loop: NO_ITERATE,

  distinct_lengths: ([strings]) =>
    strings.pipe(
      map((string) => [enc(length(string)), string]),
      reduce((values) => {
        const n = present(values).length
        return n === 0 ? [] : [[n, 1]]
      }),
      map(([n, c]) => [`length: ${dec(n)}`, c]),
    ),

  min_max_count_distinct: ([trips]) =>
    trips.pipe(
      map(([key, fare, distance]) => [enc(key), [fare, distance]]),
      reduce((values) => {
        const rows = present(values)
        if (rows.length === 0) return []
        const fares = rows.map(([fare]) => fare).filter((fare) => fare !== null).sort(compare)
        const distances = new Set(rows.map(([, distance]) => distance).filter((d) => d !== null).map(enc))
        const least = fares.length ? fares[0] : null
        const greatest = fares.length ? fares[fares.length - 1] : null
        return [[[least, greatest, distances.size], 1]]
      }),
      map(([key, [least, greatest, n]]) => [dec(key), least, greatest, n]),
    ),

  difference: ([a, b]) => a.pipe(concat(b.pipe(negate()))),

  concat: ([a, b]) => a.pipe(concat(b)),

  plus_five_evens: ([numbers]) =>
    numbers.pipe(
      map((n) => n + 5),
      filter((n) => n % 2 === 0),
    ),

  name_lengths: ([names]) => names.pipe(map((name) => [name, length(name)])),

  three_hops: ([query, links]) => {
    const byFrom = links.pipe(keyed())
    const hop = (reached) =>
      reached.pipe(
        innerJoin(byFrom),
        map(([, [origin, to]]) => [enc(to), origin]),
      )
    return hop(hop(hop(query.pipe(map((node) => [enc(node), node]))))).pipe(unkeyed())
  },

  enrichment: ([facts, users, addrs, agents]) => {
    // Each step: rows keyed by the next join's key, LEFT JOIN the next table on its first field.
    const step = (rows, table, nextKey) =>
      leftOuterJoinKeyed(rows, table.pipe(map((row) => [enc(row[0]), row]))).pipe(
        map(([, [row, match]]) => [enc(nextKey(match)), [...row, match]]),
      )
    const second = (match) => (match === null ? null : match[1])
    const rows = facts.pipe(map((fact) => [enc(fact[1]), [fact]]))
    return step(step(step(rows, users, second), addrs, second), agents, () => null).pipe(map(([, row]) => row))
  },

  explode: ([pairs]) => pairs.pipe(expand(([key, n]) => [[key, n]])),

  timed_copies: NO_VERSIONS,
  temporal_window: NO_VERSIONS,
}

// -- versions --------------------------------------------------------------------

/** Whether version a <= version b: integers as numbers, arrays coordinate by coordinate (document 001's product order). */
function lessEqual(a, b) {
  if (!Array.isArray(a)) return a <= b
  return a.every((coordinate, i) => coordinate <= b[i])
}

/** Whether every input's frontier has passed version t: t is >= no element of any input's frontier. */
const passed = (frontiers, t) => [...frontiers.values()].every((frontier) => !frontier.some((f) => lessEqual(f, t)))

// -- one case --------------------------------------------------------------------

class Run {
  constructor(start, write) {
    this.write = write
    this.inputNames = start.inputs
    this.closing = null // the closing line, once known before the end
    this.pending = new Map() // JSON text of a version -> [version, Map(input -> updates)], not yet fed
    this.frontiers = new Map(start.inputs.map((name) => [name, [start.dimensions === 1 ? 0 : Array(start.dimensions).fill(0)]]))
    this.fed = [] // the versions fed so far, in order
    this.outputFrontier = null // the last output frontier written
    this.out = [] // what d2mini wrote for the version being fed
    // Integer versions are fed as the frontiers pass them; pairs only once the case is whole,
    // when the adapter can tell whether they form a chain.
    this.feedEarly = start.dimensions === 1
    const builder = PROGRAMS[start.program]
    if (builder === undefined) {
      this.closing = { unsupported: `no program ${JSON.stringify(start.program)} in this adapter` }
      return
    }
    if (typeof builder === 'string') {
      this.closing = { unsupported: builder }
      return
    }
    try {
      this.graph = new D2()
      this.inputs = new Map()
      const streams = start.inputs.map((name) => {
        const stream = this.graph.newInput()
        this.inputs.set(name, stream)
        return stream
      })
      builder(streams).pipe(output((collection) => this.out.push(...collection.getInner())))
      this.graph.finalize()
    } catch (error) {
      this.closing = { error: `building the graph: ${error && error.message ? error.message : String(error)}` }
    }
  }

  feed(message) {
    if (this.closing) return
    if (!this.inputs.has(message.input)) throw new Error(`no input ${JSON.stringify(message.input)} in this case`)
    if ('data' in message) {
      for (const [record, version, multiplicity] of message.data) {
        const text = JSON.stringify(version)
        if (!this.pending.has(text)) this.pending.set(text, [version, new Map()])
        const updates = this.pending.get(text)[1]
        if (!updates.has(message.input)) updates.set(message.input, [])
        updates.get(message.input).push([record, multiplicity])
      }
      return
    }
    this.frontiers.set(message.input, message.frontier)
    if (!this.feedEarly) return
    const ready = [...this.pending.values()].map(([version]) => version).filter((t) => passed(this.frontiers, t))
    for (const version of ready.sort((a, b) => a - b)) this.feedVersion(version)
    this.writeFrontier()
  }

  /** With integer versions: the output frontier, the least version some input may still send, once it moves. */
  writeFrontier() {
    const open = [...this.frontiers.values()].flat()
    const frontier = open.length === 0 ? [] : [Math.min(...open)]
    if (JSON.stringify(frontier) !== JSON.stringify(this.outputFrontier)) {
      this.outputFrontier = frontier
      this.write({ frontier })
    }
  }

  /** Send d2mini one version's updates, input by input, run the graph, and write its output labelled with the version. */
  feedVersion(version) {
    const [, updates] = this.pending.get(JSON.stringify(version))
    this.pending.delete(JSON.stringify(version))
    for (const [name, stream] of this.inputs) {
      if (updates.has(name)) stream.sendData(new MultiSet(updates.get(name)))
    }
    this.run()
    const data = this.out.filter(([, multiplicity]) => multiplicity !== 0).map(([record, m]) => [record, version, m])
    this.out = []
    this.fed.push(version)
    if (data.length > 0) this.write({ data })
  }

  /** graph.run(), with a budget: a graph that does not settle answers an error instead of a timeout. */
  run() {
    const started = Date.now()
    let steps = 0
    while (this.graph.pendingWork()) {
      this.graph.step()
      steps += 1
      if (steps % 100 === 0 && Date.now() - started > MAX_SECONDS * 1000) {
        throw new Error(`d2mini still had work after ${steps} steps (${((Date.now() - started) / 1000).toFixed(1)} s): the graph did not settle`)
      }
    }
  }

  fail(error) {
    this.pending.clear()
    this.closing = { error: `${error && error.message ? error.message : String(error)}` }
  }

  end() {
    if (this.closing) return this.closing
    try {
      const versions = [...this.pending.values()].map(([version]) => version)
      for (let i = 0; i < versions.length; i++) {
        for (let j = i + 1; j < versions.length; j++) {
          const [a, b] = [versions[i], versions[j]]
          if (!lessEqual(a, b) && !lessEqual(b, a)) {
            return {
              unsupported:
                `versions ${JSON.stringify(a)} and ${JSON.stringify(b)} are incomparable, and d2mini has no versions: ` +
                'fed one after the other, the later would see the earlier',
            }
          }
        }
      }
      versions.sort((a, b) => (lessEqual(a, b) ? -1 : 1)) // a chain: the comparator is a total order on it
      for (const version of versions) this.feedVersion(version)
    } catch (error) {
      return { error: `${error && error.message ? error.message : String(error)}` }
    }
    if (JSON.stringify(this.outputFrontier) !== '[]') this.write({ frontier: [] }) // every version is fed
    return { done: true }
  }
}

// -- the protocol ------------------------------------------------------------------

function write(value) {
  process.stdout.write(JSON.stringify(value) + '\n')
}

async function main() {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity })
  let run = null
  for await (const line of lines) {
    if (line.trim() === '') continue
    let message
    try {
      message = JSON.parse(line)
    } catch (error) {
      if (run) run.fail(new Error(`unreadable line: ${error.message}`))
      else write({ error: `unreadable line: ${error.message}` })
      continue
    }
    if ('case' in message) {
      if (run) write(run.end()) // a case without its end line: close it anyway
      run = new Run(message, write)
    } else if (message.end) {
      if (run) write(run.end())
      else write({ error: 'end of a case that never started' })
      run = null
    } else if (run) {
      try {
        run.feed(message)
      } catch (error) {
        run.fail(error)
      }
    }
  }
  if (run) write(run.end())
}

main().catch((error) => {
  write({ error: `adapter: ${error && error.stack ? error.stack : String(error)}` })
  process.exit(1)
})
