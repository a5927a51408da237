"""Benchmarks, with their results in README.md: not part of the test run (a smoke test runs each at a tiny size)."""
