// The peer benchmark's adapter for two npm libraries: @electric-sql/d2ts and
// @electric-sql/d2mini (both 0.1.8, pinned in package.json beside this file).
//
//     node adapter.mjs <d2ts|d2mini> <workload.json>
//
// It keeps the contract of ../PROTOCOL.md: read the workload, build its query
// with the library's own operators, time the load (version 0) and each
// version, fold every output change into the checksum, and print one JSON line.
//
// The two libraries share their operator API. d2ts has versions and frontiers:
// version i's changes are sent at version i, then every input's frontier moves
// to i + 1, then the graph runs. d2mini has no versions: each version is one
// sendData per input, then one run.

import { readFileSync, writeFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'

const LIBRARIES = { d2ts: '@electric-sql/d2ts', d2mini: '@electric-sql/d2mini' }

// -- the checksum (PROTOCOL.md, 'The checksum') ------------------------------

const P = 2147483647

// Every intermediate value stays below 2**53 (h < 2**31, times about 2**20),
// so plain JavaScript numbers compute it exactly.
function recordHash(record) {
  let h = 17
  for (const x of Array.isArray(record) ? record : [record]) {
    h = (h * 1000003 + (((x % P) + P) % P)) % P
  }
  return h
}

class Checksum {
  count = 0
  total = 0

  // Fold a list of [record, diff] pairs (a MultiSet's inner array).
  addAll(changes) {
    for (const [record, diff] of changes) {
      this.count += diff
      this.total = (((this.total + diff * recordHash(record)) % P) + P) % P
    }
  }

  toString() {
    return `${this.count}:${this.total}`
  }
}

// -- reduce functions --------------------------------------------------------
//
// A library's reduce calls its function with a group's values as
// [value, multiplicity] pairs. These are not consolidated: d2ts passes the raw
// updates since its last compaction (a retraction as a separate -1 entry), and
// d2mini files values in a Map by identity, so a retracted array meets its
// insertion only if both are the same object, which they never are here. So
// each function first sums the multiplicities of equal values (by content) and
// keeps the values whose sum is positive: those are the group's live values.

function liveValues(values, keyOf) {
  const sums = new Map()
  for (const [value, multiplicity] of values) {
    const key = keyOf(value)
    const entry = sums.get(key)
    if (entry) entry[1] += multiplicity
    else sums.set(key, [value, multiplicity])
  }
  const live = []
  for (const [value, multiplicity] of sums.values()) {
    if (multiplicity > 0) live.push(value)
  }
  return live
}

// W4: MIN and MAX of a group of integers; no row for an empty group.
function minMax(values) {
  const live = liveValues(values, (value) => value)
  if (live.length === 0) return []
  let low = Infinity
  let high = -Infinity
  for (const value of live) {
    if (value < low) low = value
    if (value > high) high = value
  }
  return [[[low, high], 1]]
}

// W5: MIN(fare), MAX(fare), COUNT(DISTINCT distance) of a group of
// [fare, distance] pairs; no row for an empty group.
function faresAndDistances(values) {
  const live = liveValues(values, ([fare, distance]) => `${fare},${distance}`)
  if (live.length === 0) return []
  let low = Infinity
  let high = -Infinity
  const distances = new Set()
  for (const [fare, distance] of live) {
    if (fare < low) low = fare
    if (fare > high) high = fare
    distances.add(distance)
  }
  return [[[low, high, distances.size], 1]]
}

// -- the queries (PROTOCOL.md's table) ---------------------------------------
//
// Each takes the library module and its input streams (in the order of
// `inputs`) and returns the output stream, whose records are PROTOCOL.md's
// output records. Keys stay integers: both libraries file keys in JavaScript
// Maps, which compare arrays by identity, so a tuple key would not group.

const QUERIES = {
  count: {
    inputs: ['records'],
    // The library's count emits [key, 0] when a key's last record goes
    // (it counts the group's updates even when they cancel), so the rows with
    // a count of 0 are filtered out: the query's rows are the keys with count > 0.
    build: (L, records) => records.pipe(L.count(), L.filter(([, n]) => n > 0)),
  },
  join: {
    inputs: ['left', 'right'],
    build: (L, left, right) =>
      left.pipe(
        L.join(right, 'inner'),
        L.map(([key, [l, r]]) => [key, l, r]),
      ),
  },
  minmax: {
    inputs: ['values'],
    build: (L, values) =>
      values.pipe(
        L.reduce(minMax),
        L.map(([key, [low, high]]) => [key, low, high]),
      ),
  },
  taxi: {
    inputs: ['trips'],
    build: (L, trips) =>
      trips.pipe(
        L.map(([, passengers, fare, distance]) => [passengers, [fare, distance]]),
        L.reduce(faresAndDistances),
        L.map(([passengers, [low, high, distinct]]) => [passengers, low, high, distinct]),
      ),
  },
  reach: {
    inputs: ['edges', 'roots'],
    needsIterate: true,
    build: reach,
  },
}

// W3: the nodes reachable from a root along directed edges, roots included.
//
// d2ts's iterate hands its body only the iterated stream: a stream from outside
// the loop has one-dimensional versions, and the loop's are two-dimensional, so
// the body cannot join with `edges` directly. So the edges and the roots travel
// around the loop with the reached nodes, all keyed by node and told apart by
// their value:
//   [src, dst]      an edge (dst is a number)
//   [node, 'root']  a root
//   [node, 'reach'] a node reached so far
// Each round the body passes the edges and roots on unchanged, and reaches the
// roots and the successors of every reached node. It ends with distinct, which
// writes only the changes that do not cancel, so the loop goes quiet once
// nothing new is reached (a body ending in consolidate instead keeps sending
// empty messages around the loop and never settles).
// d2ts 0.1.8 answers this wrongly: its index compaction drops a key's whole
// history when one of its versions consolidates to nothing, which the loop's
// ingress retraction causes every round (finding F1 of
// final/conformance/d2ts/REPORT.md); on a chain 0 -> 1 -> 2 -> 3 from root 0
// it reaches only 0 and 1.
function reach(L, edges, roots) {
  const start = edges.pipe(L.concat(roots.pipe(L.map((node) => [node, 'root']))))
  return start.pipe(
    L.iterate((loop) => {
      const loopEdges = loop.pipe(L.filter(([, value]) => typeof value === 'number'))
      const loopRoots = loop.pipe(L.filter(([, value]) => value === 'root'))
      const reached = loop.pipe(L.filter(([, value]) => value === 'reach'))
      const next = reached.pipe(
        L.join(loopEdges, 'inner'),
        L.map(([, [, dst]]) => [dst, 'reach']),
      )
      return loopEdges.pipe(
        L.concat(loopRoots),
        L.concat(loopRoots.pipe(L.map(([node]) => [node, 'reach']))),
        L.concat(next),
        L.distinct(),
      )
    }),
    L.filter(([, value]) => value === 'reach'),
    L.map(([node]) => node),
  )
}

// -- running a workload ------------------------------------------------------

function fail(reason) {
  process.stderr.write(`adapter.mjs: ${reason}\n`)
  process.exit(1)
}

// The changes of one version, grouped by input: name -> [[record, diff], ...].
function byInput(changes) {
  const groups = new Map()
  for (const [name, record, diff] of changes) {
    if (!groups.has(name)) groups.set(name, [])
    groups.get(name).push([record, diff])
  }
  return groups
}

// Builds the graph with the query, and returns send(version, groups), which
// sends one version's changes, runs the graph until the output is
// complete for that version, and folds the output's changes into `checksum`.
function setUp(engine, L, query, checksum) {
  const versioned = engine === 'd2ts'
  const graph = versioned ? new L.D2({ initialFrontier: 0 }) : new L.D2()
  const inputs = query.inputs.map(() => graph.newInput())

  // The output's changes are folded as they come, not consolidated first:
  // the fold is linear, so the checksum is the same, and final's adapter
  // reads its output unconsolidated too. (Known library bug, 0.1.8, both
  // libraries: consolidate identifies a record by a 32-bit murmur3 hash of
  // its JSON text and never compares the records, so two different records
  // whose hashes collide are merged into one; among the 10N rows of W2's join
  // this happens from N = 10,000. The benchmark's README reports it.)
  let outputFrontier = null
  query.build(L, ...inputs).pipe(
    L.output((message) => {
      if (!versioned) checksum.addAll(message.getInner())
      else if (message.type === L.MessageType.DATA) checksum.addAll(message.data.collection.getInner())
      else outputFrontier = message.data
    }),
  )
  graph.finalize()

  const send = (version, groups) => {
    query.inputs.forEach((name, i) => {
      const changes = groups.get(name)
      if (!changes || changes.length === 0) return
      if (versioned) inputs[i].sendData(version, new L.MultiSet(changes))
      else inputs[i].sendData(new L.MultiSet(changes))
    })
    if (versioned) for (const input of inputs) input.sendFrontier(version + 1)
    graph.run()
    // d2ts: the version is complete once the output's frontier has passed it.
    if (versioned && (outputFrontier === null || outputFrontier.lessEqualVersion(L.v(version)))) {
      fail(`d2ts: after run(), the output frontier ${outputFrontier} has not passed version ${version}`)
    }
  }
  return send
}

async function main() {
  const [engine, path] = process.argv.slice(2)
  if (!(engine in LIBRARIES) || !path) fail('usage: node adapter.mjs <d2ts|d2mini> <workload.json>')
  const workload = JSON.parse(readFileSync(path, 'utf8'))
  const query = QUERIES[workload.query]
  if (!query) fail(`unknown query ${JSON.stringify(workload.query)}`)

  const L = await import(LIBRARIES[engine])
  if (query.needsIterate && typeof L.iterate !== 'function') {
    console.log(JSON.stringify({
      unsupported: `${engine} 0.1.8 has no iterate operator (no feedback loop), and ${workload.query} ` +
        'is a fixed point over the edges; it is not emulated by recomputing from scratch',
    }))
    return
  }

  const checksum = new Checksum()
  const send = setUp(engine, L, query, checksum)

  // Version 0: each input's records, each with multiplicity 1.
  const initial = new Map(Object.entries(workload.inputs).map(
    ([name, records]) => [name, records.map((record) => [record, 1])],
  ))
  const rssBeforeLoad = process.memoryUsage().rss
  // Reset the peak resident set to the current one, so the peak the driver
  // reads at exit is that of the load and the updates, not of parsing the file.
  try {
    writeFileSync('/proc/self/clear_refs', '5')
  } catch {
    // Not Linux, or not allowed: the peak then includes the parse.
  }
  let start = performance.now()
  send(0, initial)
  const loadSeconds = (performance.now() - start) / 1000

  const latencies = []
  workload.versions.forEach((changes, i) => {
    const groups = byInput(changes)
    start = performance.now()
    send(i + 1, groups)
    latencies.push((performance.now() - start) / 1000)
  })

  console.log(JSON.stringify({
    load_s: loadSeconds,
    latencies,
    rss_before_load: rssBeforeLoad,
    checksum: checksum.toString(),
  }))
}

await main()
