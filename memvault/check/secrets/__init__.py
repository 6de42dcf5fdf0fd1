"""The secret scan: credentials found in text without echoing them, for `log`, curate, `check` and the hook."""
