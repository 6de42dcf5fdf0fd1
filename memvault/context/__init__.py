"""The block of memory an agent loads at the top of its prompt (`memvault context`, docs/context.md):
MEMORY.md's live bullets and the entries most relevant to the task, grouped by kind, each line citing
its id, within a token budget; what it returns counts as recalled."""

from memvault.context.build import DEFAULT_BUDGET, context, scope_filter

__all__ = ["DEFAULT_BUDGET", "context", "scope_filter"]
