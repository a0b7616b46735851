"""bunzai benchmarks: a seeded corpus generator (``bench.gen``), the single-process codec loop
(``bench.codecs``), the pipeline, memory and scaling runs (``bench.pipe``) and the runner that prints
every figure as a ratio to a baseline measured in the same run (``python -m bench``).

BENCHMARKS.md has the latest figures, docs/perf-notes/method.md the method.
"""
