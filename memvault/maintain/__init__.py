"""`memvault maintain`: the `[retention]` policies applied (docs/retention.md#maintenance)."""
