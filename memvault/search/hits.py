"""A search result: the entry, its score and the parts of it, and the JSON shape printed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memvault.entries.model import Event
from memvault.entries.render import iso


@dataclass
class Hit:
    """One search result, with the parts of its score."""

    id: str
    type: str
    timestamp: datetime | None
    file: str
    line: int
    end_line: int
    score: float
    relevance: float
    importance: float
    recency: float
    confidence: float
    snippet: str
    tags: tuple[str, ...] = ()
    status: str = "live"
    superseded_by: str | None = None
    title: str = ""
    content: str = ""
    kind: str = "log"
    matched: bool = True  # the entry itself holds a query word (not only its neighbours)
    sources_superseded_by: str | None = None  # a bullet whose every source is superseded (rank.py)
    matched_by: tuple[str, ...] | None = None  # "words", "meaning": set by a semantic or hybrid search only
    entry: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    event: Event | None = field(default=None, repr=False, compare=False)

    @property
    def location(self) -> str:
        return f"{self.file}#L{self.line}-L{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        """The entry's JSON shape (as `list`/`show` print it) plus the search's own fields."""
        return {
            **self.entry,
            "id": self.id, "type": self.type, "timestamp": iso(self.timestamp),
            "file": self.file, "line": self.line, "end_line": self.end_line,
            "location": self.location, "score": round(self.score, 6),
            "score_parts": {
                "relevance": round(self.relevance, 6), "importance": round(self.importance, 6),
                "recency": round(self.recency, 6), "confidence": round(self.confidence, 6),
            },
            "snippet": self.snippet, "tags": list(self.tags), "status": self.status,
            "superseded_by": self.superseded_by, "title": self.title, "content": self.content,
            "kind": self.kind, "matched": self.matched, "sources_superseded_by": self.sources_superseded_by,
            **({"matched_by": list(self.matched_by)} if self.matched_by is not None else {}),
        }
