"""The shared test suite, and what it stands on: the documents' examples, one harness over every stage, the tour."""
