"""The data pipeline on Spark: ``final/`` checked against Spark SQL, version by version, on real-shaped data.

A data set (004's taxi trips, a graph, 003's facts and dimensions) becomes a
change log per table in Delta Lake's change data feed convention
(``changelog``), read back through one model of a change, one check and
one reader per layout whichever command reads it (``sources``). At every
version, Spark SQL computes each query from scratch on the accumulated
tables (``truth``) while ``final/`` maintains the same query incrementally
through its public API (``incremental``); the pipeline
compares the two results row by row and times both (``pipeline``), runs the
queries that split by key partitioned on Spark executors, one ``final/``
engine per partition (``partitioned``), and writes a report with plots
(``report``). ``python -m final.spark run`` does all of it (``__main__``),
after checking every input before any work starts (``inputs``); every
output replaces the previous one whole, and every message shows values as
SQL does (``outputs``). Queries in SQL are compiled into ``final/``
dataflows (``sql``), and the compiler is checked on random queries over
random histories against the same from-scratch side (``fuzz``).

Importing this package imports nothing from Spark: executors import
``final.spark.incremental`` and ``final.spark.tables_and_queries`` to run
their partitions, and need only pyspark and the zip of ``final/`` the driver
ships.
"""
