"""Differences the SQL fuzzer found (``python -m final.spark fuzz``), each shrunk to a small case and kept here
once its cause was fixed: a table or two, a history, a query, and Spark SQL's answer at each version, replayed
without Spark (``final.spark.fuzz.replay``). One file per bug; the docstring says what went wrong."""
