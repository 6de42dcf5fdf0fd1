"""Writing entries: `log` (and `init`), with `guard` checking every text before it reaches a file."""
