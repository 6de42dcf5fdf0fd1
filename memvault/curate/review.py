"""The curate review: one proposal at a time, the person decides, curate re-plans and writes.

`Review(vault, plan)` holds the plan and the decisions so far. `step` is what awaits a
decision: the proposal as it would be written, its place in the review, and MEMORY.md's
budget if it is accepted. `accept()`, `skip()`, `edit(text)` and `quit()` decide it. After
the proposals come the archives the budget then needs, re-planned from what was accepted:
keeping a bullet offers the next most expendable one. `finish()` writes what was accepted.

Nothing here prompts or prints: `memvault curate` asks and shows, and a program or a test
drives the same review. The reports `curate` prints (`result_dict`, `nothing`, `budget_line`)
are here too, so that `--yes`, `--json` and the review say the same things.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memvault.curate.budget import archives_for, budget, budget_warnings
from memvault.curate.document import check_edit
from memvault.curate.plan import Plan, Proposal
from memvault.curate.promote import Applied, apply
from memvault.errors import InputError
from memvault.parsed import ParsedVault

__all__ = ["Review", "Step", "apply_all", "budget_line", "nothing", "result_dict", "window"]


@dataclass(frozen=True)
class Step:
    """A proposal awaiting a decision."""

    proposal: Proposal  # with the lines it would be written with (an edit changes them)
    number: int  # 1-based: among the proposals, or among the archives
    total: int  # the archives' total grows when a kept bullet makes another one needed
    budget: dict[str, Any]  # MEMORY.md's size and budget if this one is accepted too

    @property
    def editable(self) -> bool:
        return self.proposal.kind != "archive"  # an archive moves a bullet as it is

    def draft(self) -> str:
        """The bullet as text to edit; `Review.edit` takes it back."""
        return "\n".join(self.proposal.lines) + "\n"


@dataclass
class Review:
    """A review of `plan`, decided one `step` at a time; `step` is None when it is over."""

    vault: ParsedVault
    plan: Plan
    accepted: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False)  # proposal key -> lines
    archived: list[Proposal] = field(default_factory=list, init=False)
    kept: set[str] = field(default_factory=set, init=False)  # bullets the person chose not to archive
    stopped: bool = field(default=False, init=False)
    step: Step | None = field(default=None, init=False)
    _next: int = field(default=0, init=False)  # index of the proposal under review
    _lines: tuple[str, ...] | None = field(default=None, init=False)  # its edited lines

    def __post_init__(self) -> None:
        self._advance()

    @property
    def empty(self) -> bool:
        """Nothing to decide: no proposal, and MEMORY.md within its budget."""
        return not self.plan.proposals and not self.plan.archives

    # -- decisions -----------------------------------------------------------------------

    def accept(self) -> None:
        p = self._current().proposal
        if p.kind == "archive":
            self.archived.append(p)
        else:
            self.accepted[p.key] = p.lines
            self._next, self._lines = self._next + 1, None
        self._advance()

    def skip(self) -> None:
        p = self._current().proposal
        if p.kind == "archive":
            assert p.bullet is not None  # an archive always names its bullet
            self.kept.add(p.bullet)
        else:
            self._next, self._lines = self._next + 1, None
        self._advance()

    def edit(self, text: str) -> None:
        """Take the person's edit of `step.draft()`: the step is shown again with it, or
        skipped when the text was emptied. `InputError` when it is not one bullet."""
        step = self._current()
        if not step.editable:
            raise InputError("an archive moves the bullet as it is; accept or skip it")
        lines = check_edit(text, step.proposal.block_id)
        if lines == ():
            self.skip()
            return
        self._lines = lines
        self._advance()

    def quit(self) -> None:
        """Stop here: what was accepted is kept, the rest comes back next time."""
        self._current()
        self.stopped = True
        self.step = None

    # -- the end -------------------------------------------------------------------------

    def finish(self) -> dict[str, Any] | None:
        """Write what was accepted and say what was done (the shape `curate --yes --json`
        prints); None when the review stopped before anything was accepted, and nothing
        was written. A review stopped early does not move the curation point, so skipped
        entries come back next time. Finishing before the end stops the review there."""
        if self.empty:
            return nothing(self.plan)
        if self.step is not None:
            self.quit()
        if self.stopped and not self.accepted and not self.archived:
            return None
        applied = apply(self.vault, self.plan, self.accepted, self.archived, complete=not self.stopped)
        return result_dict(self.plan, applied, self.accepted, self.archived)

    # -- re-planning ---------------------------------------------------------------------

    def _current(self) -> Step:
        if self.step is None:
            raise InputError("the review is over: nothing is waiting for a decision")
        return self.step

    def _advance(self) -> None:
        """The next step: the next proposal, else the next archive the budget still needs."""
        proposals = self.plan.proposals
        if self._next < len(proposals):
            p = proposals[self._next]
            lines = p.lines if self._lines is None else self._lines
            size = budget(self.plan, dict(self.accepted, **{p.key: lines}), [])
            self.step = Step(replace(p, lines=lines), self._next + 1, len(proposals), size)
            return
        decided = {a.bullet for a in self.archived} | self.kept
        pending = [a for a in archives_for(self.plan, self.accepted, exclude=self.kept) if a.bullet not in decided]
        if not pending:
            self.step = None
            return
        n = len(self.archived) + len(self.kept) + 1
        a = replace(pending[0], key=f"a{n}")
        self.step = Step(a, n, n + len(pending) - 1, budget(self.plan, self.accepted, self.archived + [a]))


# ------------------------------------------------------------------------------ reports


def apply_all(vault: ParsedVault, plan: Plan) -> dict[str, Any]:
    """`curate --yes`: write every proposal and archive; `nothing(plan)` when there is none."""
    if not plan.proposals and not plan.archives:
        return nothing(plan)
    return result_dict(plan, apply(vault, plan))


def result_dict(plan: Plan, result: Applied, accepted: Mapping[str, tuple[str, ...]] | None = None,
                archived: list[Proposal] | None = None) -> dict[str, Any]:
    """What was written: counts, budget, the proposals and archives applied, warnings."""
    chosen = [p for p in plan.proposals if accepted is None or p.key in accepted]
    return {
        "applied": result.written, "memory": str(plan.path), "counts": result.counts, "budget": result.budget,
        "proposals": [p.to_dict() for p in chosen],
        "archives": [a.to_dict() for a in (plan.archives if archived is None else archived)],
        "archived_to": result.archived_to, "curation_point_recorded": result.marker,
        "warnings": list(plan.warnings) + budget_warnings(plan, result.budget),
    }


def nothing(plan: Plan) -> dict[str, Any]:
    """The answer when there is nothing to curate: which entries were looked at, and the budget."""
    b = budget(plan)
    left = left_out(plan)
    why = f"; left out: {left}" if left else ""
    return {"applied": False, "message": f"nothing to curate: {window(plan)}; {budget_line(b)}{why}", "budget": b}


def left_out(plan: Plan, top: int = 3) -> str:
    """The commonest reasons entries were left out, counted (`--explain ID` tells one entry's)."""
    counts = Counter(_gist(d.reason) for d in plan.decisions.values() if not d.chosen)
    if not counts:
        return ""
    parts = [f"{n:,} {reason}" for reason, n in counts.most_common(top)]
    rest = sum(counts.values()) - sum(n for _, n in counts.most_common(top))
    return ", ".join(parts) + (f", {rest:,} for other reasons" if rest else "") + " (--explain ID says why for one)"


def _gist(reason: str) -> str:
    """A reason without its particulars, so that alike reasons count together: up to the first
    `: `, ` (` or ` and ` (an id's own colon, `2026-11-27T09:00`, is no cut); which entry
    superseded it, or when it expired, is `--explain`'s to say. `before --since T` keeps its T."""
    cut = min((i for i in (reason.find(": "), reason.find(" ("), reason.find(" and ")) if i > 0), default=len(reason))
    gist = reason[:cut].strip()
    for general in ("superseded", "expired", "forgotten"):
        if gist.startswith(general + " "):
            return general
    return gist


def window(plan: Plan) -> str:
    """Which entries the plan considered, and why from there."""
    if plan.since is None:
        return "every live entry" + (" (--all)" if plan.since_from == "all" else " (no earlier curation)")
    where = "last curation, from MEMORY.md" if plan.since_from == "marker" else "--since"
    also = ", and entries logged since with an earlier time" if plan.record_used else ""
    return f"entries since {plan.since.isoformat()} ({where}){also}"


def budget_line(b: dict[str, Any]) -> str:
    """`budget: 820 → 956 / 8,000 chars`, from a `budget()` dict."""
    parts = []
    if b["chars"]:
        parts.append(f"{b['before']['chars']:,} \u2192 {b['after']['chars']:,} / {b['chars']:,} chars")
    if b["lines"]:
        parts.append(f"{b['before']['lines']:,} \u2192 {b['after']['lines']:,} / {b['lines']:,} lines")
    if not parts:
        parts.append(f"{b['after']['chars']:,} chars, no budget set")
    return "budget: " + "; ".join(parts) + ("  OVER BUDGET" if b["over"] else "")
