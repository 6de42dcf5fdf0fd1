"""Time travel's edges: no git, shallow clones, merges, detached HEAD, revisions, caches, CLI."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memvault.cli import cli
from memvault.entries.spans import SpanIndex
from memvault.entries.timeline import Timeline
from memvault.errors import GitError, NotFoundError
from memvault.history.gitrepo import Commit, CommitList
from memvault.vault import Vault

from .conftest import copy_vault, git


def commit_at(root: Path, when: str, message: str = "c") -> str:
    env = {"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    git(root, "add", "-A", env=env)
    git(root, "commit", "-q", "--allow-empty", "-m", message, env=env)
    return git(root, "rev-parse", "HEAD").strip()


def write_log(root: Path, day: str, body: str) -> None:
    (root / "memory").mkdir(exist_ok=True)
    (root / "memory" / f"{day}.md").write_text(f"# {day}\n\n{body}")


def ids(items: list[dict]) -> list[str]:
    return [d["id"] for d in items]


@pytest.fixture
def small(vault_dir: Path) -> Path:
    """Three commits: a belief, its correction, then a hand edit and a deletion."""
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    git(vault_dir, "init", "-q")
    write_log(vault_dir, "2026-02-14", "## 14:30 - Belief\nFriday updates\n\n## 15:00 - Belief\nDark mode\n")
    commit_at(vault_dir, "2026-02-14T16:00:00+00:00", "day one")
    write_log(vault_dir, "2026-02-21", "## 16:00 - Correction\nMonday updates\nSupersedes: 2026-02-14T14:30\n")
    commit_at(vault_dir, "2026-02-21T16:00:00+00:00", "correction")
    write_log(vault_dir, "2026-02-14", "## 14:30 - Belief\nFriday afternoon updates\n")
    commit_at(vault_dir, "2026-02-22T09:00:00+00:00", "hand edit, dark mode deleted")
    return vault_dir


# -- the two clocks on a small history ---------------------------------------------------------


def test_recorded_time_shows_what_the_files_said(small):
    vault = Vault.open(small)
    assert ids(vault.as_of("2026-02-14T15:59:59Z", recorded=True)) == []
    assert ids(vault.as_of("2026-02-14T16:00:00Z", recorded=True)) == ["2026-02-14T14:30", "2026-02-14T15:00"]
    assert ids(vault.as_of("2026-02-21T16:00:00Z", recorded=True)) == ["2026-02-14T15:00", "2026-02-21T16:00"]
    now = vault.as_of("2030-01-01", recorded=True)  # T in the future: the last commit
    assert ids(now) == ["2026-02-21T16:00"]


def test_event_time_uses_todays_text_and_the_rule(small):
    vault = Vault.open(small)
    got = vault.as_of("2026-02-14T15:00:00Z")
    assert ids(got) == ["2026-02-14T14:30"]  # the deleted entry is gone from event time
    assert got[0]["content"] == "Friday afternoon updates"
    assert got[0]["confidence"] == pytest.approx(0.95 ** (0.5 / 24), rel=1e-6)  # fractional days
    assert ids(vault.as_of("2026-02-21T15:59:59Z")) == ["2026-02-14T14:30"]
    assert ids(vault.as_of("2026-02-21T16:00:00Z")) == ["2026-02-21T16:00"]  # <= T supersedes
    assert vault.as_of("2026-02-10") == []


def test_a_plain_date_means_the_end_of_that_day_except_for_since(small):
    vault = Vault.open(small)
    assert ids(vault.as_of("2026-02-21")) == ["2026-02-21T16:00"]
    assert ids(vault.as_of("2026-02-21 15:00")) == ["2026-02-14T14:30"]
    # --since 2026-02-21 includes that day (as `list --since` does); --until includes it too
    assert ids(vault.changes("2026-02-21")["new"]) == ["2026-02-21T16:00"]
    assert ids(vault.changes("2026-02-14", "2026-02-21")["new"]) == ["2026-02-14T14:30", "2026-02-21T16:00"]


def test_changes_lists_new_superseded_edited_deleted(small):
    got = Vault.open(small).changes("2026-02-14T16:00:00Z")
    assert ids(got["new"]) == ["2026-02-21T16:00"]
    assert ids(got["superseded"]) == ["2026-02-14T14:30"]
    assert ids(got["edited"]) == ["2026-02-14T14:30"]
    assert got["edited"][0]["old"] == "## 14:30 - Belief\nFriday updates"
    assert got["edited"][0]["new"] == "## 14:30 - Belief\nFriday afternoon updates"
    assert ids(got["deleted"]) == ["2026-02-14T15:00"]
    until = Vault.open(small).changes("2026-02-14T16:00:00Z", "2026-02-21T17:00:00Z")
    assert until["edited"] == [] and until["deleted"] == []


def test_uncommitted_edits_count_as_changes_to_the_working_tree(small):
    write_log(small, "2026-02-21", "## 16:00 - Correction\nMonday morning updates\nSupersedes: 2026-02-14T14:30\n")
    got = Vault.open(small).changes("2026-02-22T10:00")
    assert ids(got["edited"]) == ["2026-02-21T16:00"]
    assert got["to_commit"] is None


def test_history_answers_what_superseded_an_entry(small):
    got = Vault.open(small).history("2026-02-14T14:30")
    assert got["superseded_by"] == "2026-02-21T16:00"
    assert ids(got["chain"]) == ["2026-02-14T14:30", "2026-02-21T16:00"]
    assert [c["change"] for c in got["commits"]] == ["added", "edited"]
    assert got["commits"][1]["new"].endswith("Friday afternoon updates")


def test_history_finds_a_deleted_entry_in_git(small):
    got = Vault.open(small).history("2026-02-14T15:00")
    assert got["status"] == "deleted"
    assert [c["change"] for c in got["commits"]] == ["added", "deleted"]


def test_unknown_id_is_a_clear_error(small, runner):
    with pytest.raises(NotFoundError, match="no entry with id 'nope'"):
        Vault.open(small).history("nope")
    result = runner.invoke(cli, ["history", "nope"])
    assert result.exit_code == 1 and "no entry with id 'nope'" in result.output


def test_diff_groups_by_file_and_section(small):
    (small / "MEMORY.md").write_text("# Long-Term Memory\n\n## Preferences\n- Likes tea ^tea\n")
    commit_at(small, "2026-02-23T09:00:00+00:00")
    (small / "MEMORY.md").write_text("# Long-Term Memory\n\n## Preferences\n- Likes green tea ^tea\n")
    commit_at(small, "2026-02-24T09:00:00+00:00")
    got = Vault.open(small).diff("2026-02-14", "2026-02-24")
    groups = {(g["file"], g["section"]): g for g in got["groups"]}
    assert ids(groups[("MEMORY.md", "Preferences")]["appeared"]) == ["tea"]
    assert ids(groups[("memory/2026-02-14.md", None)]["gone"]) == ["2026-02-14T14:30", "2026-02-14T15:00"]
    reasons = {d["id"]: d["reason"] for d in groups[("memory/2026-02-14.md", None)]["gone"]}
    assert reasons == {"2026-02-14T14:30": "superseded", "2026-02-14T15:00": "deleted"}
    changed = Vault.open(small).diff("2026-02-23", "2026-02-24")
    assert [(g["section"], ids(g["changed"])) for g in changed["groups"]] == [("Preferences", ["tea"])]


# -- time points -------------------------------------------------------------------------------


def test_git_revisions_name_a_commit(small):
    vault = Vault.open(small)
    git(small, "tag", "v1", "HEAD~2")
    assert ids(vault.as_of("v1", recorded=True)) == ["2026-02-14T14:30", "2026-02-14T15:00"]
    assert ids(vault.as_of("HEAD~1", recorded=True)) == ["2026-02-14T15:00", "2026-02-21T16:00"]
    # for event time a revision means its committer date
    assert ids(vault.as_of("HEAD~2")) == ids(vault.as_of("2026-02-14T16:00:00Z"))


def test_commit_exactly_at_t_and_same_second_commits(vault_dir):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    git(vault_dir, "init", "-q")
    write_log(vault_dir, "2026-03-01", "## 10:00 - Belief\nOne\n")
    commit_at(vault_dir, "2026-03-01T10:00:00+00:00")
    write_log(vault_dir, "2026-03-01", "## 10:00 - Belief\nOne\n\n## 10:00 - Belief\nTwo\n")
    commit_at(vault_dir, "2026-03-01T10:00:00+00:00")  # same second: the later commit wins
    vault = Vault.open(vault_dir)
    assert ids(vault.as_of("2026-03-01T10:00:00Z", recorded=True)) == ["2026-03-01T10:00", "2026-03-01T10:00-2"]
    assert vault.as_of("2026-03-01T09:59:59.999999Z", recorded=True) == []


def test_zone_less_times_are_in_the_vaults_zone(vault_dir):
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    write_log(vault_dir, "2026-03-01", "## 10:00 - Belief\nOne\n")
    vault = Vault.open(vault_dir)
    assert vault.as_of("2026-03-01 09:59") == []
    assert ids(vault.as_of("2026-03-01 10:00")) == ["2026-03-01T10:00"]
    assert ids(vault.as_of("2026-03-01T09:00Z")) == ["2026-03-01T10:00"]


# -- bad input ---------------------------------------------------------------------------------


def test_without_git_event_time_works_and_recorded_time_says_it_needs_git(sample_vault, runner):
    vault = Vault.open(sample_vault)
    assert ids(vault.as_of("2026-02-21T16:00+01:00"))[-1] == "2026-02-21T16:00"
    with pytest.raises(GitError, match="need git history.*not in a git repository"):
        vault.as_of("2026-02-21", recorded=True)
    result = runner.invoke(cli, ["asof", "2026-02-21", "--recorded"])
    assert result.exit_code == 1 and "not in a git repository" in result.output
    got = vault.changes("2026-02-14")
    assert ids(got["superseded"]) == ["2026-02-14T14:30"] and got["edited"] == []
    assert "not a git repository" in got["warnings"][0]
    assert vault.history("2026-02-14T14:30")["commits"] == []


def test_an_empty_repository_has_nothing_recorded_yet(sample_vault):
    git(sample_vault, "init", "-q")
    assert Vault.open(sample_vault).as_of("2030-01-01", recorded=True) == []


def test_shallow_clone_answers_what_it_has_and_says_what_it_lacks(small, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{small}", str(clone)], check=True)
    vault = Vault.open(clone)
    assert ids(vault.as_of("2026-02-23", recorded=True)) == ["2026-02-21T16:00"]
    with pytest.raises(GitError, match="shallow clone"):
        vault.as_of("2026-02-15", recorded=True)
    assert "shallow" in vault.history("2026-02-21T16:00")["warnings"][0]


def test_detached_head_reads_from_the_checked_out_commit(small):
    git(small, "checkout", "-q", "--detach", "HEAD~1")
    assert ids(Vault.open(small).as_of("2030-01-01", recorded=True)) == ["2026-02-14T15:00", "2026-02-21T16:00"]


def test_merges_follow_the_first_parent(small):
    git(small, "checkout", "-q", "-b", "side", "HEAD~2")
    write_log(small, "2026-02-15", "## 09:00 - Belief\nFrom a side branch\n")
    commit_at(small, "2026-02-15T10:00:00+00:00", "side")
    git(small, "checkout", "-q", "-")
    env = {"GIT_COMMITTER_DATE": "2026-02-25T10:00:00+00:00", "GIT_AUTHOR_DATE": "2026-02-25T10:00:00+00:00"}
    git(small, "merge", "-q", "--no-ff", "-m", "merge side", "side", env=env)
    vault = Vault.open(small)
    # the side commit is dated 2026-02-15 but is not on the first-parent chain
    assert ids(vault.as_of("2026-02-16", recorded=True)) == ["2026-02-14T14:30", "2026-02-14T15:00"]
    assert "2026-02-15T09:00" in ids(vault.as_of("2026-02-26", recorded=True))
    commits = vault.history("2026-02-15T09:00")["commits"]
    assert [c["change"] for c in commits] == ["added"]  # the merge, compared with its first parent
    assert commits[0]["date"].startswith("2026-02-25")


def test_vault_in_a_subdirectory_of_a_repository(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    vault = repo / "notes" / "vault"
    vault.mkdir(parents=True)
    (vault / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    git(repo, "init", "-q")
    write_log(vault, "2026-02-14", "## 14:30 - Belief\nOne\n")
    commit_at(repo, "2026-02-14T16:00:00+00:00")
    write_log(vault, "2026-02-14", "## 14:30 - Belief\nOne, edited\n")
    commit_at(repo, "2026-02-15T16:00:00+00:00")
    monkeypatch.setenv("MEMVAULT_VAULT", str(vault))
    v = Vault.open(vault)
    assert ids(v.as_of("2026-02-14T17:00:00Z", recorded=True)) == ["2026-02-14T14:30"]
    assert v.as_of("2026-02-14T17:00:00Z", recorded=True)[0]["content"] == "One"
    assert [c["change"] for c in v.history("2026-02-14T14:30")["commits"]] == ["added", "edited"]


def test_bad_times_are_usage_errors(small, runner):
    result = runner.invoke(cli, ["asof", "next blursday"])
    assert result.exit_code == 2 and "git revision" in result.output


# -- speed machinery: packing and the parse cache -------------------------------------------------


def loose(root: Path) -> int:
    out = git(root, "count-objects", "-v")
    return int(next(line.split(":")[1] for line in out.splitlines() if line.startswith("count:")))


def test_loose_objects_are_packed_when_there_are_many(small):
    assert loose(small) > 5
    (small / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[history]\npack_loose = 0\n')
    Vault.open(small).as_of("2030-01-01", recorded=True)
    assert loose(small) > 5  # 0 turns packing off
    (small / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n[history]\npack_loose = 5\n')
    before = Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True)
    assert loose(small) == 0
    assert Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True) == before


def test_parse_cache_is_derived_and_follows_settings(small):
    first = Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True)
    cache = small / ".memvault" / "history.sqlite"
    assert cache.is_file()
    assert Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True) == first  # read back from disk
    shutil.rmtree(small / ".memvault")
    assert Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True) == first
    # another zone changes what the same bytes mean: the cache must not answer for it
    (small / "memvault.toml").write_text('[vault]\ntimezone = "America/New_York"\n')
    shifted = Vault.open(small).as_of("2026-02-21T16:00Z", recorded=True)
    assert ids(shifted) == ["2026-02-14T14:30", "2026-02-14T15:00"]
    assert shifted[0]["timestamp"] == "2026-02-14T14:30:00-05:00"


# -- pure pieces -------------------------------------------------------------------------------


def test_commit_search_is_exact_even_when_dates_go_backwards():
    rng = random.Random(7)
    for _ in range(200):
        times = [rng.randint(0, 40) for _ in range(rng.randint(0, 12))]
        commits = CommitList([Commit(f"{i:040x}", t) for i, t in enumerate(times)])
        for probe in range(-2, 44):
            when = datetime.fromtimestamp(probe, UTC)
            want = next((c for c in reversed(commits.commits) if c.time <= probe), None)
            assert commits.at(when) == want, (times, probe)


@pytest.mark.parametrize("name", ["seed", "messy", "obsidian"])
def test_span_index_agrees_with_the_rule(name, vault_dir):
    copy_vault(name, vault_dir)
    # add expiry, a same-time supersession and a duplicate id to the mix
    extra = ("## 08:00 - Belief\nTemporary\nExpires: 2026-02-15T12:00\n\n## 08:00 - Correction\nSame minute\n"
             "Supersedes: 2026-02-15T08:00\n\n## 09:00 - Belief\nDup\nId: dup\n\n## 09:30 - Belief\nDup again\nId: dup\n")
    write_log(vault_dir, "2026-02-15", extra)
    tl = Vault.open(vault_dir).timeline
    spans = SpanIndex(tl)
    points = {t for e in tl.events for t in (e.timestamp, e.expires, e.updated) if t is not None}
    probes = sorted(points | {p + d for p in points for d in (timedelta(microseconds=-1), timedelta(microseconds=1))})
    probes += [datetime(1990, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)]
    for at in probes:
        assert spans.live(at) == tl.live(at), at


def test_span_index_on_random_timelines():
    from memvault.config.core import Config
    from memvault.entries.daily import parse_log

    cfg = Config(timezone="UTC")
    rng = random.Random(3)
    for _ in range(30):
        events = []
        ids_so_far: list[str] = []
        for day in range(1, 4):
            body = []
            for _ in range(rng.randint(1, 5)):
                hh = rng.choice([9, 10, 11])
                lines = [f"## {hh}:00 - Belief", "text"]
                if ids_so_far and rng.random() < 0.5:
                    lines.append(f"Supersedes: {rng.choice(ids_so_far)}")
                if rng.random() < 0.2:
                    lines.append(f"Expires: 2026-01-0{rng.randint(1, 5)}T10:00")
                body.append("\n".join(lines))
            parsed = parse_log(f"# 2026-01-0{day}\n\n" + "\n\n".join(body) + "\n", f"memory/2026-01-0{day}.md", cfg)
            events += parsed.events
            ids_so_far += [e.id for e in parsed.events]
        tl = Timeline(events, cfg)
        spans = SpanIndex(tl)
        for day in range(1, 6):
            for hh in range(8, 13):
                at = datetime(2026, 1, day, hh, tzinfo=UTC)
                for at2 in (at - timedelta(microseconds=1), at):
                    assert spans.live(at2) == tl.live(at2)


# -- CLI ---------------------------------------------------------------------------------------


def test_cli_json_shapes(small, runner):
    result = runner.invoke(cli, ["asof", "2026-02-21T16:00:00Z", "--recorded", "--json"])
    assert result.exit_code == 0, result.output
    items = json.loads(result.output)
    for key in ("id", "type", "content", "timestamp", "confidence", "supersedes", "superseded_by", "file", "line"):
        assert key in items[0]
    assert [d["supersedes"] for d in items] == [None, "2026-02-14T14:30"]
    changes = json.loads(runner.invoke(cli, ["changes", "--since", "2026-02-14T16:00Z", "--json"]).output)
    assert {"new", "superseded", "edited", "deleted"} <= set(changes)
    hist = json.loads(runner.invoke(cli, ["history", "2026-02-14T14:30", "--json"]).output)
    assert {"chain", "commits"} <= set(hist) and hist["chain"][0]["superseded_by"] == "2026-02-21T16:00"
    diff = json.loads(runner.invoke(cli, ["diff", "2026-02-14", "2026-02-22", "--json"]).output)
    assert {"from", "to", "groups"} <= set(diff)


def test_cli_text_reads_like_a_changelog(small, runner):
    out = runner.invoke(cli, ["changes", "--since", "2026-02-14T16:00Z"]).output
    assert "New (1)" in out and "Superseded (1)" in out and "Edited (1)" in out and "Deleted (1)" in out
    assert "was: ## 14:30 - Belief Friday updates" in out
    out = runner.invoke(cli, ["history", "2026-02-14T14:30"]).output
    assert "superseded by 2026-02-21T16:00" in out and "Commits that changed it:" in out
    out = runner.invoke(cli, ["diff", "2026-02-14", "2026-02-22"]).output
    assert "memory/2026-02-14.md" in out and "went away" in out
    out = runner.invoke(cli, ["asof", "2026-02-21T16:00Z", "monday"]).output
    assert "2026-02-21T16:00" in out and "1 entry" in out


# -- QUERY: ranked as search ranks, as of T ----------------------------------------------------


def test_asof_query_ranks_only_what_was_live_at_t(small):
    vault = Vault.open(small)
    before = vault.as_of("2026-02-21T15:00:00Z", "weekly updates")
    assert ids(before) == ["2026-02-14T14:30"]  # the correction is newer than T
    assert before[0]["confidence"] == pytest.approx(0.95 ** (7 + 0.5 / 24), rel=1e-5)
    assert before[0]["score_parts"]["confidence"] == pytest.approx(before[0]["confidence"], rel=1e-5)
    after = vault.as_of("2026-02-21T16:00:00Z", "Friday updates")
    # the old belief is superseded at T; search finds the correction through it
    assert ids(after) == ["2026-02-21T16:00"]
    live = set(ids(vault.as_of("2026-02-21T16:00:00Z")))
    assert set(ids(vault.as_of("2026-02-21T16:00:00Z", "updates mode"))) <= live


def test_recorded_asof_query_searches_the_text_as_it_was(small):
    vault = Vault.open(small)
    then = vault.as_of("2026-02-14T16:00:00Z", "dark mode", recorded=True)
    assert ids(then)[0] == "2026-02-14T15:00"  # deleted later, found as of then
    assert vault.as_of("2026-02-14T16:00:00Z", "afternoon", recorded=True) == []  # words added later
    # the edited belief has the word now, but is superseded: search leads to its correction
    assert ids(vault.as_of("2026-02-22T10:00:00Z", "afternoon", recorded=True)) == ["2026-02-21T16:00"]
    assert "2026-02-14T15:00" not in ids(vault.as_of("2026-02-22T10:00:00Z", "dark", recorded=True))
    assert vault.as_of("2020-01-01", "dark", recorded=True) == []


def test_history_json_times_are_in_the_vault_zone_and_bad_revisions_are_named(runner, sample_vault):
    import json as _json

    from memvault.cli import cli

    from .conftest import git as _git

    _git(sample_vault, "init", "-q")
    _git(sample_vault, "add", "-A")
    _git(sample_vault, "commit", "-q", "-m", "seed", env={"GIT_COMMITTER_DATE": "2026-02-22T12:00:00+00:00",
                                                        "GIT_AUTHOR_DATE": "2026-02-22T12:00:00+00:00"})
    out = runner.invoke(cli, ["history", "2026-02-14T14:30", "--json"])
    assert out.exit_code == 0, out.output
    dates = [c["date"] for c in _json.loads(out.output)["commits"]]
    assert dates and all(d.endswith("+01:00") for d in dates)  # Europe/Berlin in February
    changes = _json.loads(runner.invoke(cli, ["changes", "--since", "2026-02-20", "--json"]).output)
    assert changes["since"]["time"].endswith("+01:00")
    bad = runner.invoke(cli, ["asof", "HEAD~99", "--recorded"])
    assert bad.exit_code == 2 and "'HEAD~99' is not a revision in this repository" in bad.output


LONG = ("We agreed that the Atlas prototype keeps its data in one SQLite file next to the service, "
        "with nightly copies to the backup bucket, and revisit at {n} users.")


def test_history_text_shows_commit_times_in_the_vault_zone_and_the_edit_itself(runner, vault_dir):
    # Commit times were printed in UTC beside entry times in the vault's zone, and an edit near
    # the end of a long entry was cut off ("was: ... Impo…" / "now: ... I…"), hiding the change.
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "Europe/Berlin"\n')
    log = vault_dir / "memory" / "2026-02-14.md"
    git(vault_dir, "init", "-q")
    for n, when in ((10_000, "2026-02-14T18:00:00+00:00"), (20_000, "2026-02-15T23:30:00+00:00")):
        log.write_text("# 2026-02-14\n\n## 14:30 - Decision\n" + LONG.format(n=f"{n:,}") + "\n")
        git(vault_dir, "add", "-A")
        git(vault_dir, "commit", "-q", "--no-verify", "-m", "x",
            env={"GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when})
    result = runner.invoke(cli, ["history", "2026-02-14T14:30"])
    assert result.exit_code == 0, result.output
    assert "2026-02-14T19:00" in result.output and "2026-02-16T00:30" in result.output
    assert "revisit at 10,000 users" in result.output and "revisit at 20,000 users" in result.output
    data = json.loads(runner.invoke(cli, ["history", "2026-02-14T14:30", "--json"]).output)
    assert [c["change"] for c in data["commits"]] == ["added", "edited"]
