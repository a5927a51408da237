-- source: 002, iterate: the nodes reachable from the roots, to a fixed point
WITH RECURSIVE reached(node) AS (
  SELECT node FROM roots
  UNION
  SELECT e.dst FROM reached r JOIN edges e ON r.node = e.src
)
SELECT node FROM reached
