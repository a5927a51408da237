"""Differences the SQL fuzzer found (``python -m final.spark fuzz``), each shrunk and kept once its cause was fixed.

Each is a small case: a table or two, a history, a query, and Spark SQL's answer at each version, replayed
without Spark (``final.spark.fuzz.replay``). One file per bug; the docstring says what went wrong."""
