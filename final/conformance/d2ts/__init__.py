"""d2ts, checked by the oracle: its Node adapter (``adapter.mjs``), its pinned npm install, and the
reproducers of what the check found (``findings.py``, written to ``findings/``; ``REPORT.md`` explains them)."""
