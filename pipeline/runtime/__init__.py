"""What every job of the pipeline runs on: storage (fsspec URLs, bounded reads, atomic writes) and
its secrets, the command-line options, Beam counters and the live progress display, process
settings (memory, Beam's fixed cost per run)."""
