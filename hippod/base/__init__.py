"""Base utilities every layer may use: the clock, settings, errors, files, logs, subprocesses, threads."""
