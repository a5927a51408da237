"""Solutions to the notebooks' exercises, one module per notebook, each answer named after its checker.

Each module also has ``MISTAKES``: for each exercise, a wrong answer a
learner might plausibly give, which its checker must reject with a message
(``tests/test_exercises.py`` checks both).
"""
