"""The `sync` section of `memvault status`: where the vault is shared, how far it is ahead of and
behind its remote (as the last fetch knew it: status never touches the network), the last sync's
time and result, and a sync left interrupted or stopped for the person, with what to do."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.gitio import run_git
from memvault.sync.state import summary

if TYPE_CHECKING:
    from memvault.parsed import ParsedVault

NOT_SHARED = "not shared (no git remote); to share it: `git remote add origin URL`, then `memvault sync`"


def status_section(vault: ParsedVault) -> tuple[str, dict[str, Any], list[str]]:
    """(name, data for --json, lines for people)."""
    root = Path(vault.root).resolve()
    if not run_git(["rev-parse", "--absolute-git-dir"], root, check=False).ok:
        data: dict[str, Any] = {"shared": False, "why": "not a git repository"}
        return "sync", data, ["sync: not shared (the vault is not in a git repository)"]
    settings = vault.config.section("sync", {})
    data = summary(root, vault.derived, settings.get("remote"), settings.get("branch"))
    data["shared"] = data["remote"] is not None and data["branch"] is not None
    return "sync", data, sync_lines(data, datetime.now(UTC))


def sync_lines(data: dict[str, Any], now: datetime) -> list[str]:
    """The section as text (pure: `data` is `status_section`'s, `now` is given)."""
    busy = data.get("in_progress")
    if not data.get("shared"):
        lines = [f"sync: {NOT_SHARED}"]
        return lines + ([f"  in progress: {busy['message']}"] if busy else [])
    where = f"{data['remote']}/{data['branch']}" + (f" ({data['url']})" if data.get("url") else "")
    lines = [f"sync: {where}: {_position(data)}"]
    last = data.get("last")
    if last:
        lines.append(f"  last sync {_when(last.get('at'), now)}: {_result(last)}")
    else:
        lines.append("  never synced from this clone; run `memvault sync` (or `memvault watch --sync`)")
    if busy:
        lines.append(f"  in progress: {busy['message']}")
    return lines


def _position(data: dict[str, Any]) -> str:
    ahead, behind = data.get("ahead"), data.get("behind")
    if ahead is None or behind is None:
        return "nothing fetched from the remote yet"
    if not ahead and not behind:
        return "up to date (as of the last fetch)"
    parts = []
    if ahead:
        parts.append(f"{ahead} commit{'s' * (ahead != 1)} ahead (not pushed yet)")
    if behind:
        parts.append(f"{behind} commit{'s' * (behind != 1)} behind")
    return ", ".join(parts) + " (as of the last fetch)"


def _result(last: dict[str, Any]) -> str:
    result = str(last.get("result") or "unknown")
    if result in ("failed", "stopped"):
        return f"{result}: {last.get('message') or 'no reason recorded'}"
    moved = []
    if last.get("merged_from"):
        moved.append(f"{last['merged_from']} commit{'s' * (last['merged_from'] != 1)} in")
    if last.get("pushed"):
        moved.append(f"{last['pushed']} commit{'s' * (last['pushed'] != 1)} out")
    said = result + (f" ({', '.join(moved)})" if moved else "")
    if last.get("conflicts"):
        said += f"; {len(last['conflicts'])} entry conflict(s) marked, `memvault check` lists them"
    return said


def _when(stamp: Any, now: datetime) -> str:
    try:
        seconds = (now - datetime.fromisoformat(str(stamp))).total_seconds()
    except (TypeError, ValueError):  # no time, or one without a zone: say it as it is
        return str(stamp)
    if seconds < 90:
        ago = f"{max(seconds, 0):.0f}s ago"
    elif seconds < 5400:
        ago = f"{seconds / 60:.0f} min ago"
    else:
        ago = f"{seconds / 3600:.1f} h ago"
    return f"{stamp} ({ago})"
