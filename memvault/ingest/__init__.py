"""`memvault ingest`: facts from a conversation or tool log into the vault (docs/ingest.md)."""
