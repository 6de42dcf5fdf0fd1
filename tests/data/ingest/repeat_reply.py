"""A `--with` command whose reply says one fact twice (the second time naming turn 2)."""

import json
import sys

json.load(sys.stdin)
print(json.dumps([
    {"content": "The user prefers tea.", "importance_score": 0.9},
    {"content": "The user prefers tea.", "importance_score": 0.9, "metadata": {"turn": 2}},
    {"content": "The user lives in Köln.", "importance_score": 0.6, "metadata": {"turn": 1}},
]))
