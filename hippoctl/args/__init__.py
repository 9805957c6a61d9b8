"""hippoctl's command line: one module per verb family, each registering its verbs' arguments and the
request body each sends (registry.py); command.py builds the parser and the body from them.

Kept empty: the per-prompt hook reads `argv.py` and `argcheck.py` alone, without loading every verb.
"""
