"""``make mutate``: mutation testing of the modules whose bugs lose data or hide a loss.

    .venv/bin/python -m tests.mutation [--jobs N] [SLUG ...]

mutmut (the ``test`` extra) changes one thing at a time in a module — a comparison, a bound, a
constant, a branch — and runs the tests that cover it; a change no test notices (a *survivor*) is a
behaviour nothing pins. ``targets.py`` names each module with its own test selection (fast tests
only: the pipeline's slow end-to-end runs would take hours), and the survivors looked at and found
harmless (``EXPLAINED``: an equivalent mutant, or one that changes only wording), each with its
reason. Each target runs in its own folder under ``out/mutate/<slug>/`` (mutmut's ``mutants/`` copy
of the project and its config, so every module gets its own selection), and mutmut runs, for each
mutant, only the tests of that selection that executed the mutated function.

The run writes each target's record into ``tests/mutation/results.json`` (committed: a run of some
targets keeps the others' last runs) and rewrites the measured part of ``docs/mutation.md``; it exits 1 when a survivor is not in ``EXPLAINED`` (a behaviour to pin with a test, or to explain).
Not part of ``make test``: it runs for tens of minutes.
"""
