"""Nothing curate writes changes how an existing reference resolves (issue 13, point 1).

A description written in a daily log (`Supersedes: belief about GIF in README`) chooses among
earlier log entries only, so a bullet curate adds for the correction can neither steal the
reference nor make it ambiguous, which would bring the corrected belief back to life.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.check.runner import check_vault
from memvault.cli import cli
from memvault.curate.promote import apply, plan_curation
from memvault.vault import Vault

from .helpers_check import NOW, git, git_repo, run_check

GIF_DAY = """# 2026-11-30

## 09:00 - Belief
User wants a GIF at the top of the README

## 11:00 - Correction
User does not want a GIF in the README after all
Supersedes: belief about GIF in README
"""


def test_curating_a_correction_keeps_the_belief_it_corrects_superseded(vault_dir, runner):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "memory" / "2026-11-30.md").write_text(GIF_DAY)
    assert runner.invoke(cli, ["check"]).exit_code == 0
    done = runner.invoke(cli, ["curate", "--yes", "--at", "2026-12-01 10:00"], catch_exceptions=False)
    assert done.exit_code == 0 and "1 added" in done.output
    assert "User does not want a GIF in the README" in (vault_dir / "MEMORY.md").read_text()
    checked = runner.invoke(cli, ["check"])
    assert checked.exit_code == 0, checked.output
    assert "[superseded]" in runner.invoke(cli, ["show", "2026-11-30T09:00"]).output.splitlines()[0]
    vault = Vault.open(vault_dir)
    assert [e.kind for e in vault.events].count("curated") == 1  # the bullet is there, and read
    assert vault.timeline.problems == []
    assert vault.timeline.supersedes["2026-11-30T11:00"] == "2026-11-30T09:00"
    assert vault.as_dict(vault.get("2026-11-30T09:00"))["status"] == "superseded"


def test_a_log_description_never_names_a_bullet_but_an_id_or_a_block_still_does(vault_dir):
    (vault_dir / "memory").mkdir()
    (vault_dir / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    (vault_dir / "MEMORY.md").write_text("# Long-Term Memory\n\n## Notes\n- Der Build-Server heißt Quokka ^mv-aaaaaa\n")
    (vault_dir / "memory" / "2026-03-02.md").write_text(
        "# 2026-03-02\n\n## 10:00 - Correction\nDer Build-Server heißt jetzt Wombat\nSupersedes: Build-Server Quokka\n\n"
        "## 11:00 - Correction\nQuokka ist weg\nSupersedes: ^mv-aaaaaa\n")
    vault = Vault.open(vault_dir)
    messages = [p.message for p in vault.timeline.problems]
    assert messages == ["Supersedes 'Build-Server Quokka' does not resolve: no earlier entry matches 'Build-Server Quokka'"]
    assert vault.timeline.supersedes == {"2026-03-02T11:00": "mv-aaaaaa"}
    # typed on the command line (`show`), a description may still mean a bullet
    assert vault.timeline.index.resolve("Build-Server Quokka").target == "mv-aaaaaa"


# ------------------------------------------------------------------------------ property

DAYS = ["2026-05-04", "2026-05-05", "2026-05-06"]
TIMES = ["08:00", "09:30", "11:00", "14:15"]
SUBJECTS = ["GIF im README", "dark mode", "Postgres billing", "weekly status reports", "Zürich office",
            "green tea", "Friday deploys", "light mode"]
TYPES = ["Belief", "Decision", "Observation", "Correction"]

refs = st.one_of(
    st.builds(lambda t, s: f"{t.lower()} about {s}", st.sampled_from(TYPES), st.sampled_from(SUBJECTS)),
    st.builds(lambda s, d: f"{s} from {d}", st.sampled_from(SUBJECTS), st.sampled_from(DAYS)),
    st.sampled_from(SUBJECTS),
    st.builds(lambda d, t: f"{d}T{t}", st.sampled_from(DAYS), st.sampled_from(TIMES)),
    st.builds(lambda d, t: f"[[{d}#{t}]]", st.sampled_from(DAYS), st.sampled_from(TIMES)),
    st.sampled_from(["^fri", "custom-1", "something nobody wrote", "^mv-000001", "[[MEMORY#^mv-000002]]"]),
)

entries = st.tuples(
    st.sampled_from(DAYS), st.sampled_from(TIMES), st.sampled_from(TYPES),
    st.sampled_from(SUBJECTS), st.sampled_from(["User wants", "Wir nutzen", "No longer", "Again:", ""]),
    st.one_of(st.none(), st.tuples(st.sampled_from(["Supersedes", "Reconfirms"]), refs)),
    st.sampled_from(["", " ^fri", "\nId: custom-1", "\nTags: pref"]),
)


def _write(root: Path, items: list[tuple], bullets: list[str]) -> None:
    if bullets:  # a MEMORY.md curated before, whose bullets references name by block
        lines = [f"- {text} (added 2026-05-01) ^mv-{i:06d}" for i, text in enumerate(bullets, 1)]
        (root / "MEMORY.md").write_text("# Long-Term Memory\n\n## Notes\n" + "\n".join(lines) + "\n")
    by_day: dict[str, list[tuple]] = {}
    for item in items:
        by_day.setdefault(item[0], []).append(item)
    (root / "memory").mkdir()
    (root / "memvault.toml").write_text('[vault]\ntimezone = "UTC"\n')
    for day, rows in by_day.items():
        text = f"# {day}\n"
        for _, time, kind, subject, lead, ref, extra in sorted(rows, key=lambda r: r[1]):
            text += f"\n## {time} - {kind}\n{(lead + ' ' + subject).strip()}{extra}\n"
            if ref:
                text += f"{ref[0]}: {ref[1]}\n"
        (root / "memory" / f"{day}.md").write_text(text)


def _answers(root: Path) -> dict[tuple[str, int, str], tuple[str | None, tuple[str, ...]]]:
    """Every reference in the daily logs -> (its target, or its candidates when ambiguous)."""
    tl = Vault.open(root).timeline
    out = {}
    for ev in tl.events:
        if ev.kind != "log" or tl.by_id.get(ev.id) is not ev:
            continue
        for ref in ([ev.supersedes] if ev.supersedes else []) + list(ev.reconfirms):
            res = tl.index.resolve(ref, ev)
            out[(ev.file, ev.line, ref)] = (res.target, tuple(res.candidates))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(entries, min_size=1, max_size=9), curate_twice=st.booleans(),
       bullets=st.lists(st.builds(lambda lead, s: f"{lead} {s}", st.sampled_from(["User wants", "Wir nutzen"]),
                                  st.sampled_from(SUBJECTS)), max_size=3))
def test_curate_never_changes_what_a_reference_resolves_to(items, curate_twice, bullets):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, items, bullets)
        before = _answers(root)
        for at in [datetime(2026, 5, 7, 12, tzinfo=UTC)] + ([datetime(2026, 5, 9, tzinfo=UTC)] if curate_twice else []):
            vault = Vault.open(root)
            apply(vault, plan_curation(vault, at=at, everything=True))
            assert _answers(root) == before


# ------------------------------------------------------------------------------ the hook (MV019)

HOLDER = "# 2026-02-11\n\n## 11:00 - Correction\nNo GIF in the README after all\nSupersedes: belief about GIF in README\n"
BELIEF = "# 2026-02-10\n\n## 09:00 - Belief\nUser wants a GIF at the top of the README\n"


def _repo(tmp_path: Path) -> Path:
    return git_repo(tmp_path / "v", {"memvault.toml": '[vault]\ntimezone = "UTC"\n',
                                     "memory/2026-02-10.md": BELIEF, "memory/2026-02-11.md": HOLDER})


def test_a_backfill_that_blurs_a_reference_in_an_unchanged_file_is_refused(tmp_path):
    repo = _repo(tmp_path)
    (repo / "memory" / "2026-02-09.md").write_text("# 2026-02-09\n\n## 09:00 - Belief\nUser wants a GIF in the README header\n")
    git(repo, "add", "memory/2026-02-09.md")
    report = run_check(repo, staged=True)
    assert [(p.code, p.path, p.line) for p in report.problems] == [("MV019", "memory/2026-02-11.md", 3)]
    assert report.problems[0].message == (
        "this change makes Supersedes 'belief about GIF in README' resolve to nothing (ambiguous: "
        "2026-02-09T09:00, 2026-02-10T09:00) instead of 2026-02-10T09:00; "
        "the staged change: memory/2026-02-09.md:3 adds '09:00 - Belief' (2026-02-09T09:00)")
    assert check_vault(Vault.open(repo), staged=True, now=NOW, changed_lines=True).problems == report.problems  # never excused
    # saying which belief it meant (and staging that) lets the commit through
    (repo / "memory" / "2026-02-11.md").write_text(HOLDER.replace("belief about GIF in README", "2026-02-10T09:00"))
    git(repo, "add", "memory/2026-02-11.md")
    assert run_check(repo, staged=True).problems == []


def test_deleting_the_entry_a_reference_names_is_refused_and_an_unrelated_edit_is_not(tmp_path):
    repo = _repo(tmp_path)
    (repo / "memory" / "2026-02-10.md").write_text(BELIEF + "\n## 10:00 - Observation\nDer Kaffee ist alle\n")
    git(repo, "add", "-A")
    assert run_check(repo, staged=True).problems == []
    git(repo, "commit", "-q", "--no-verify", "-m", "coffee")
    git(repo, "rm", "-q", "memory/2026-02-10.md")
    found = run_check(repo, staged=True).problems
    assert [(p.code, p.path) for p in found] == [("MV019", "memory/2026-02-11.md")]
    assert "resolve to nothing instead of 2026-02-10T09:00" in found[0].message


def test_committing_what_curate_wrote_passes_the_hook(tmp_path, runner, monkeypatch):
    repo = _repo(tmp_path)
    monkeypatch.setenv("MEMVAULT_VAULT", str(repo))
    assert runner.invoke(cli, ["curate", "--yes", "--at", "2026-02-12 10:00"], catch_exceptions=False).exit_code == 0
    assert "No GIF in the README" in (repo / "MEMORY.md").read_text()
    git(repo, "add", "MEMORY.md")
    checked = runner.invoke(cli, ["check", "--staged"])
    assert checked.exit_code == 0, checked.output
    assert Vault.open(repo).as_dict(Vault.open(repo).get("2026-02-10T09:00"))["status"] == "superseded"
    # a bullet that takes over a block a log's reference names is caught, though the log is unchanged
    (repo / "memory" / "2026-02-11.md").write_text(HOLDER.replace("belief about GIF in README", "^gif"))
    (repo / "memory" / "2026-02-10.md").write_text(BELIEF.rstrip("\n") + " ^gif\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "block")
    memory = (repo / "MEMORY.md").read_text()
    assert "## User Preferences\n" in memory  # where curate put the correction of what the user wants
    (repo / "MEMORY.md").write_text(memory.replace("## User Preferences\n", "## User Preferences\n- Wants a GIF ^gif\n"))
    git(repo, "add", "MEMORY.md")
    assert [p.code for p in run_check(repo, staged=True).problems] == ["MV019"]
