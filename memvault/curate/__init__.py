"""Curate: which log entries to promote into MEMORY.md (`select`), the MEMORY.md document model
(`document`), applying a review (`promote`) and `--with CMD` (`with_command`)."""
