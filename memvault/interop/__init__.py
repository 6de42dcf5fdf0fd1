"""Other memory formats in and out of a vault: agent-memory/0.1, the forgetting-curve skill's memory.jsonl, MemoryBlock."""
