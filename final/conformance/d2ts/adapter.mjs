// The conformance oracle's line protocol, spoken by d2ts.
//
// Reads cases from standard input (a start line, the case's input messages,
// {"end": true}), builds each case's program as a d2ts dataflow graph, feeds
// every message to it as it arrives, and writes the graph's output updates,
// its output frontier and one closing line per case. See ../README.md,
// 'The protocol an engine speaks', and REPORT.md beside this file.
//
// The oracle runs it from its install in a user cache folder, beside the pinned
// @electric-sql/d2ts (`--engine d2ts`, or `--engine 'd2ts --workarounds'`):
//
//   node adapter.mjs                 the programs written with d2ts's own operators
//   node adapter.mjs --workarounds   d2ts's count, filterBy, leftJoin and (in loops)
//                                    consolidate replaced by constructions from its
//                                    other operators, to look past four of the
//                                    findings in REPORT.md
//
// A graph still working after D2TS_ADAPTER_MAX_SECONDS (default 5) on one
// message answers {"error"}: a loop that never settles, rather than a timeout.

import { createInterface } from 'node:readline'
import {
  Antichain,
  D2,
  MessageType,
  MultiSet,
  antiJoin,
  concat,
  consolidate,
  count,
  distinct,
  filter,
  filterBy,
  innerJoin,
  iterate,
  leftJoin,
  map,
  negate,
  output,
  reduce,
  v,
} from '@electric-sql/d2ts'

const WORKAROUNDS = process.argv.includes('--workarounds')
// A case of the committed set settles in at most ~30 ms per message; a loop still busy after this is not converging.
const MAX_SECONDS = Number(process.env.D2TS_ADAPTER_MAX_SECONDS || 5)

// -- records -------------------------------------------------------------------
//
// Records arrive as JSON values (arrays are tuples, null is NULL) and are
// passed to d2ts as they are. Keys are different: d2ts's keyed operators
// (join, reduce, count, distinct) file keys in JavaScript Maps, which compare
// arrays by identity, so two equal tuples read from two lines are two keys.
// Every key therefore enters d2ts as its JSON text (what d2ts's own groupBy
// does with its keys) and is parsed back when the key leaves.

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
 * d2ts hands reduce the raw updates of a key (one entry per update, retractions
 * included), so every reduction here consolidates first.
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

/** [key, value] records to d2ts's keyed form: the key as its JSON text. */
const keyed = () => map(([key, value]) => [enc(key), value])
/** Back from d2ts's keyed form. */
const unkeyed = () => map(([key, value]) => [dec(key), value])

/**
 * Each record r with accumulated multiplicity m becomes the records of produce(r),
 * each [value, n] with multiplicity n * m. d2ts has no flat_map and no operator
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

/** A keyed count: d2ts's count(), or (with --workarounds) a reduce that gives no record for a key that has none. */
function countByKey() {
  if (!WORKAROUNDS) return count()
  return reduce((values) => {
    let total = 0
    for (const [, multiplicity] of values) total += multiplicity
    return total === 0 ? [] : [[total, 1]]
  })
}

/** The distinct keys of a stream of plain keys, in d2ts's keyed form [enc(key), null]. */
const distinctKeys = (keys) => keys.pipe(map((key) => [enc(key), null]), distinct())

/** left (keyed) records whose key is among keys (plain), each with its multiplicity. */
function semijoinKeyed(left, keys) {
  const present = distinctKeys(keys)
  if (!WORKAROUNDS) return left.pipe(filterBy(present))
  return left.pipe(
    innerJoin(present),
    map(([key, [value]]) => [key, value]),
  )
}

/** left (keyed) records whose key is not among keys (plain), as [key, [value, null]]: d2ts's antiJoin, given distinct keys. */
const antijoinKeyed = (left, keys) => left.pipe(antiJoin(distinctKeys(keys)))

/**
 * SQL's LEFT JOIN of keyed streams whose null keys (enc(null)) match nothing: [key, [a, b or null]].
 * d2ts's leftJoin, or (with --workarounds) its inner join plus its antiJoin against the right side's
 * distinct keys: d2ts's leftJoin hands antiJoin the right side as it is, so a left record whose key
 * has n right records is subtracted n times.
 */
function leftOuterJoinKeyed(left, right) {
  const usable = right.pipe(filter(([key]) => key !== enc(null)))
  if (!WORKAROUNDS) return left.pipe(leftJoin(usable))
  const matched = left.pipe(innerJoin(usable))
  const unmatched = antijoinKeyed(left, usable.pipe(map(([key]) => dec(key))))
  return matched.pipe(concat(unmatched))
}

/** The least value per key, over the values present (a reduce: d2ts has no keyed min operator). */
const minByKey = () =>
  reduce((values) => {
    const candidates = present(values)
    if (candidates.length === 0) return []
    return [[candidates.reduce((a, b) => (compare(b, a) < 0 ? b : a)), 1]]
  })

/**
 * iterate over a collection that carries, besides the loop's own records,
 * constant collections from outside the loop. d2ts's iterate hands its body
 * only the iterated stream, and a stream from outside has versions of the
 * wrong dimension inside, so the constants ride along, tagged, and the body
 * gets them back each round. Every round's output is consolidated (002's rule
 * for loops), so the constants' copies cancel once the loop converges.
 */
function iterateWith(start, constants, body) {
  const tagged = constants.reduce(
    (stream, constant, i) => stream.pipe(concat(constant.pipe(map((record) => [i + 1, record])))),
    start.pipe(map((record) => [0, record])),
  )
  return tagged
    .pipe(
      iterate((loop) => {
        const part = (i) => loop.pipe(filter(([tag]) => tag === i), map(([, record]) => record))
        const inside = constants.map((_, i) => part(i + 1))
        const next = body(part(0), ...inside)
        return inside
          .reduce((stream, constant, i) => stream.pipe(concat(constant.pipe(map((record) => [i + 1, record])))), next.pipe(map((record) => [0, record])))
          .pipe(settle())
      }),
    )
    .pipe(
      filter(([tag]) => tag === 0),
      map(([, record]) => record),
    )
}

/**
 * The consolidation a loop body ends with (002: every path around a loop needs
 * one): d2ts's consolidate(), or (with --workarounds) a reduce keyed by the
 * record, which writes only changes that do not cancel. d2ts's consolidate
 * writes a message at every version it closes, empty or not, and its loop
 * feeds an empty message back like any other, so a loop whose last operator
 * is consolidate() never goes quiet.
 */
function settle() {
  if (!WORKAROUNDS) return consolidate()
  return (stream) =>
    stream.pipe(
      map((record) => [enc(record), record]),
      reduce(consolidated),
      map(([, record]) => record),
    )
}

/** 002's loop bodies for numbers: step each, keep the old, bound, distinct. */
const stepBound = (step, bound) => (numbers) =>
  numbers.pipe(
    map(step),
    concat(numbers),
    filter((n) => n <= bound),
    map((n) => [enc(n), null]),
    distinct(),
    map(([n]) => dec(n)),
    settle(),
  )

// -- the programs ----------------------------------------------------------------

const SAME_VERSION =
  "d2ts's operators never move an update to another version (map, filter and reduce keep it; join takes the " +
  'least upper bound of its inputs\' versions; iterate\'s versions leave the loop truncated), so an output that ' +
  "appears at versions computed from the data (document 000's join_function and temporal filters) cannot be written"

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

  distinct: ([records]) => distinctKeys(records).pipe(map(([record]) => dec(record))),

  join: ([left, right]) => left.pipe(keyed(), innerJoin(right.pipe(keyed())), unkeyed()),

  semijoin: ([left, keys]) => semijoinKeyed(left.pipe(keyed()), keys).pipe(unkeyed()),

  antijoin: ([left, keys]) =>
    antijoinKeyed(left.pipe(keyed()), keys).pipe(map(([key, [value]]) => [dec(key), value])),

  left_outer_join: ([left, right]) => leftOuterJoinKeyed(left.pipe(keyed()), right.pipe(keyed())).pipe(unkeyed()),

  reachability: ([roots, edges]) =>
    iterateWith(roots, [roots, edges.pipe(keyed())], (reached, roots, edges) =>
      reached.pipe(
        map((node) => [enc(node), null]),
        innerJoin(edges),
        map(([, [, target]]) => target),
        concat(roots),
        map((node) => [enc(node), null]),
        distinct(),
        map(([node]) => dec(node)),
      ),
    ),

  connected_components: ([edges]) => {
    const bothWays = edges.pipe(concat(edges.pipe(map(([a, b]) => [b, a]))))
    const labels = bothWays.pipe(map(([a]) => [enc(a), a]), distinct())
    return iterateWith(labels, [bothWays.pipe(keyed())], (labels, bothWays) =>
      labels.pipe(
        innerJoin(bothWays),
        map(([, [label, neighbour]]) => [enc(neighbour), label]),
        concat(labels),
        minByKey(),
      ),
    ).pipe(unkeyed())
  },

  geometric_series: ([numbers]) => numbers.pipe(iterate(stepBound((n) => n * 2, 50))),

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

  add_one_squares: ([numbers]) => numbers.pipe(iterate(stepBound((n) => n + 1, 5)), map((n) => [n, n * n])),

  plus_five_evens: ([numbers]) =>
    numbers.pipe(
      map((n) => n + 5),
      filter((n) => n % 2 === 0),
    ),

  name_lengths: ([names]) => names.pipe(map((name) => [name, length(name)])),

  // 002 requires a consolidation on every path around a loop (its liveness
  // section, with this very example); without it d2ts's loop never ends.
  noop_loop: ([numbers]) =>
    numbers.pipe(
      iterate((loop) =>
        loop.pipe(
          map((n) => n + 1),
          map((n) => n - 1),
          negate(),
          concat(loop),
          settle(),
        ),
      ),
    ),

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

  timed_copies: SAME_VERSION,
  temporal_window: SAME_VERSION,
}

// -- versions --------------------------------------------------------------------

const toVersion = (version) => v(Array.isArray(version) ? version : [version])
const fromVersion = (version, dimensions) => {
  const inner = version.getInner()
  return dimensions === 1 ? inner[0] : [...inner]
}

// -- one case --------------------------------------------------------------------

class Run {
  constructor(start, write) {
    this.write = write
    this.dimensions = start.dimensions
    this.closing = null // the closing line, once known before the end
    this.pending = [] // output updates not yet written
    this.frontier = null // the last output frontier received, not yet written
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
      const zero = toVersion(start.dimensions === 1 ? 0 : Array(start.dimensions).fill(0))
      this.graph = new D2({ initialFrontier: zero })
      this.inputs = new Map()
      const streams = start.inputs.map((name) => {
        const stream = this.graph.newInput()
        this.inputs.set(name, stream)
        return stream
      })
      builder(streams).pipe(output((message) => this.receive(message)))
      this.graph.finalize()
    } catch (error) {
      this.closing = { error: `building the graph: ${error && error.message ? error.message : String(error)}` }
    }
  }

  receive(message) {
    if (message.type === MessageType.DATA) {
      const version = fromVersion(message.data.version, this.dimensions)
      for (const [record, multiplicity] of message.data.collection.getInner()) {
        if (multiplicity !== 0) this.pending.push([record, version, multiplicity])
      }
    } else if (message.type === MessageType.FRONTIER) {
      const antichain = message.data instanceof Antichain ? message.data : new Antichain([message.data])
      this.frontier = antichain.elements.map((version) => fromVersion(version, this.dimensions))
    }
  }

  feed(message) {
    if (this.closing) return
    const stream = this.inputs.get(message.input)
    if (stream === undefined) throw new Error(`no input ${JSON.stringify(message.input)} in this case`)
    if ('data' in message) {
      // One d2ts message per version, in the order the versions first appear.
      const byVersion = new Map()
      for (const [record, version, multiplicity] of message.data) {
        const key = JSON.stringify(version)
        if (!byVersion.has(key)) byVersion.set(key, [version, []])
        byVersion.get(key)[1].push([record, multiplicity])
      }
      for (const [version, updates] of byVersion.values()) {
        stream.sendData(toVersion(version), new MultiSet(updates))
      }
    } else {
      // [] is the empty antichain: the input is closed.
      stream.sendFrontier(new Antichain(message.frontier.map(toVersion)))
    }
    this.run()
    this.flush()
  }

  /** graph.run(), with a budget: a loop that does not converge answers an error instead of a timeout. */
  run() {
    const started = Date.now()
    let steps = 0
    while (this.graph.pendingWork()) {
      this.graph.step()
      steps += 1
      if (steps % 100 === 0 && Date.now() - started > MAX_SECONDS * 1000) {
        throw new Error(`d2ts still had work after ${steps} steps (${((Date.now() - started) / 1000).toFixed(1)} s): the graph did not settle`)
      }
    }
  }

  flush() {
    if (this.pending.length > 0) {
      this.write({ data: this.pending })
      this.pending = []
    }
    if (this.frontier !== null) {
      this.write({ frontier: this.frontier })
      this.frontier = null
    }
  }

  fail(error) {
    this.pending = []
    this.frontier = null
    this.closing = { error: `${error && error.message ? error.message : String(error)}` }
  }

  end() {
    return this.closing ?? { done: true }
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
