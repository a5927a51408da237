"""A conformance oracle for Differential Dataflow engines: named programs, cases as JSON, and a checker.

See ``README.md`` beside this file for the case format, the protocol an
engine speaks, and the catalog of programs.
"""
