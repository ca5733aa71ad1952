"""graveler's benchmark harness: ``python -m benchmarks SUITE ...``."""
