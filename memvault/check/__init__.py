"""Checking a vault: the rules (pure functions to problems), the runner (whole vault, PATHS or
what is staged), `--fix`, the secret scan and the pre-commit hook."""
