"""The checkers of each notebook's exercises, one module per notebook (``v0`` for ``v0_collections.ipynb``).

Each checker is decorated with ``workshop.exercise`` and raises
``workshop.Wrong`` saying what is wrong; ``notebooks/solutions`` has a module
of the same name whose functions or values of the same names answer them.
"""
