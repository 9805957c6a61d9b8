"""The memory model's record and its pure rules: strength and decay, digests, terms and tokens,
conflicts, merge and dedupe, sleep's plan. Values in, values out, no I/O."""
