"""Issue 10 point 8 (and issue 11): every memvault.toml value is checked when the file loads.

`vault = 1` raised AttributeError in every command and `[decay] model = "nope"` crashed
`memvault list`: a bad value is now one error (exit 1) naming the file, the table and key,
and what the value must be, whatever command runs.
"""

from __future__ import annotations

import pytest

from memvault.check.changed import HOOK_DEFAULTS
from memvault.check.registry import CHECK_DEFAULTS
from memvault.cli import cli
from memvault.config.core import SCHEMA, Config
from memvault.config.curate import DEFAULTS as CURATE
from memvault.entries.retention import DEFAULTS as RETENTION_DEFAULTS
from memvault.errors import ConfigError
from memvault.forgotten import DEFAULTS as MAINTAIN_DEFAULTS
from memvault.history.timetravel import HISTORY_DEFAULTS
from memvault.memorywire.governance import MEMORYWIRE_DEFAULTS
from memvault.search.index.core import INDEX_DEFAULTS
from memvault.search.weights import SEARCH_DEFAULTS
from memvault.serve.settings import SERVE_DEFAULTS
from memvault.watch.watcher import DEFAULTS as WATCH

from .helpers_check import commit, git, git_repo, run_memvault

COMMANDS = [
    ["list"], ["search", "tea"], ["status"], ["index"], ["check"], ["log", "hello"],
    ["show", "2026-01-05T09:00"], ["curate", "--dry-run"], ["asof", "now"], ["changes", "--since", "2020-01-01"],
]


def write(vault_dir, toml: str) -> None:
    (vault_dir / "memory").mkdir(exist_ok=True)
    (vault_dir / "memory" / "2026-01-05.md").write_text("# 2026-01-05\n\n## 09:00 - Observation\nUser likes tea\n")
    (vault_dir / "memvault.toml").write_text(toml)


def refused(runner, args: list[str]) -> str:
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, (args, result.output)
    assert isinstance(result.exception, SystemExit), (args, result.exception)  # an error, not a traceback
    return result.output


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_vault_that_is_not_a_table_is_one_clear_error_in_every_command(runner, vault_dir, args):
    write(vault_dir, "vault = 1\n")
    out = refused(runner, args)
    assert f"{vault_dir / 'memvault.toml'}:1: [vault] must be a table, got 1" in out


def test_an_unknown_decay_model_is_an_error_not_a_crash_in_list(runner, vault_dir):
    write(vault_dir, '[decay]\nmodel = "nope"\n')
    out = refused(runner, ["list"])
    assert "[decay] model must be one of 'exponential', 'ebbinghaus', 'forgetting-curve', got 'nope'" in out


def _wrong_value(table: str, key: str) -> str:
    """A TOML value of the wrong type for the setting (a table is wrong for every non-table)."""
    return "1" if key in ("sections", "field_weights") else "{ wrong = 1 }"


CASES = [(table, key) for table, keys in SCHEMA.items() for key in keys]


@pytest.mark.parametrize(("table", "key"), CASES, ids=[f"{t}.{k}" for t, k in CASES])
def test_every_setting_is_type_checked_with_its_key_and_what_it_must_be(runner, vault_dir, table, key):
    write(vault_dir, f"[{table}]\n{key} = {_wrong_value(table, key)}\n")
    out = refused(runner, ["list"])
    assert f"memvault.toml:2: [{table}] {key} must be {SCHEMA[table][key].words}" in out  # the key's line


@pytest.mark.parametrize(("toml", "message"), [
    ("[decay]\nrate = nan\n", "[decay] rate must be a number in (0, 1], got nan"),
    ("[decay]\nrate = 1.5\n", "[decay] rate must be a number in (0, 1], got 1.5"),
    ("[decay]\ntick = \"1 day\"\n", "[decay] tick must be a duration such as \"1d\", \"12h\", \"30m\" or \"1w\" (above 0), got '1 day'"),
    ("[decay]\ntick = \"0h\"\n", "[decay] tick must be a duration such as \"1d\""),
    ("[decay]\ntick = 24\n", "[decay] tick must be a duration such as \"1d\""),
    ("[decay]\nstrength = 0\n", "[decay] strength must be a number > 0, got 0"),
    ("[decay]\nactr_decay = -0.5\n", "[decay] actr_decay must be a number > 0, got -0.5"),
    ("[decay]\nretrieval_threshold = \"low\"\n", "[decay] retrieval_threshold must be a number, got 'low'"),
    ("[search]\nk1 = inf\n", "[search] k1 must be a number >= 0, got inf"),
    ("[search]\ncandidates = true\n", "[search] candidates must be a whole number >= 1, got True"),
    ("[search]\ncandidates = 2.5\n", "[search] candidates must be a whole number >= 1, got 2.5"),
    ("[search.field_weights]\nbdy = 2\n", "[search] field_weights must be a table of numbers >= 0 with keys among"),
    ("[watch]\ndebounce_ms = -5\n", "[watch] debounce_ms must be a number >= 0, got -5"),
    ("[history]\nprecompute = 1\n", "[history] precompute must be true or false, got 1"),
    ("[index]\nbackend = \"elastic\"\n", "[index] backend must be one of 'sqlite', 'whoosh', got 'elastic'"),
    ("[vault]\nextra_types = [\"Lesson\", 3]\n", "[vault] extra_types must be a list of non-empty strings"),
    ("[vault]\nextra_types = [\"Lesson\", \"Note\"]\n", "[vault] extra_types cannot hold \"note\""),
    ("[serach]\nrelevance = 1\n", "unknown table [serach]; known: [vault], [decay]"),
    ("[search]\nrecency_lamda = 0.02\n", "[search] has no setting 'recency_lamda'; known: relevance"),
    ("[retention]\nforget_below = 1.5\n", "memvault.toml:2: [retention] forget_below must be a number in [0, 1], got 1.5"),
    ("[retention]\nmax_live = -1\n", "memvault.toml:2: [retention] max_live must be a whole number >= 0, got -1"),
    ("[retention]\nmax_live = 10.5\n", "[retention] max_live must be a whole number >= 0, got 10.5"),
    ("[retention]\narchive = \"yes\"\n", "[retention] archive must be true or false, got 'yes'"),
    ("[retention]\narchive_dir = \"../elsewhere\"\n", "[retention] archive_dir must be a vault-relative folder"),
    ("[retention]\narchive_dir = \".memvault/old\"\n", "[retention] archive_dir must be a vault-relative folder"),
    ("[checks]\ndisable = \"MV014\"\n", "[checks] disable must be a list of codes such as \"MV014\", got 'MV014'"),
])
def test_values_out_of_range_and_unknown_names(runner, vault_dir, toml, message):
    write(vault_dir, toml)
    assert message in refused(runner, ["list"])


def test_good_settings_still_load(vault_dir):
    config = Config.from_dict({
        "vault": {"timezone": "UTC", "extra_types": ["Lesson"]}, "decay": {"model": "ebbinghaus", "rate": 1},
        "memory": {"sections": {"Decisions": "decision"}}, "search": {"field_weights": {"body": 3}, "k1": 1},
        "watch": {"debounce_ms": 0}, "history": {"precompute": False}, "curate": {"sections": {"#x": "X"}},
    })
    assert (config.decay_model, config.decay_rate, config.types[-1]) == ("ebbinghaus", 1.0, "lesson")


@pytest.mark.parametrize(("tick", "seconds"), [("1d", 86400), ("12h", 43200), ("90m", 5400), ("1w", 604800),
                                              ("0.5d", 43200), (" 2H ", 7200), ("30s", 30)])
def test_a_tick_is_a_duration(tick, seconds):
    assert Config.from_dict({"decay": {"tick": tick}}).decay_tick == seconds


def test_the_schema_names_exactly_the_settings_the_modules_read():
    from memvault.gitio.machine import SYNC_DEFAULTS
    from memvault.semantic import SEMANTIC_DEFAULTS

    # A module that adds a setting to its defaults must add it to config.SCHEMA, or loading a
    # file that sets it would fail as an unknown setting.
    defaults = {"index": INDEX_DEFAULTS, "search": SEARCH_DEFAULTS, "watch": WATCH, "history": HISTORY_DEFAULTS,
                "curate": CURATE, "checks": CHECK_DEFAULTS, "hook": HOOK_DEFAULTS, "retention": MAINTAIN_DEFAULTS,
                "serve": SERVE_DEFAULTS, "semantic": SEMANTIC_DEFAULTS, "sync": SYNC_DEFAULTS}
    for table, keys in defaults.items():
        assert set(SCHEMA[table]) == set(keys), table
    assert set(SCHEMA["decay"]) == set(RETENTION_DEFAULTS)
    assert set(SCHEMA["memorywire"]) == set(MEMORYWIRE_DEFAULTS)
    assert set(SCHEMA) == {*defaults, "vault", "decay", "memory", "memorywire"}


def test_a_staged_config_is_checked_the_same_way(tmp_path):
    repo = git_repo(tmp_path / "v", {"memory/2026-01-05.md": "# 2026-01-05\n\n## 09:00 - Observation\nUser likes tea\n"})
    assert run_memvault(repo, "hook", "install").returncode == 0
    (repo / "memvault.toml").write_text('[decay]\nmodel = "nope"\n')
    git(repo, "add", "memvault.toml")
    result = commit(repo)
    assert result.returncode != 0
    assert "[decay] model must be one of 'exponential', 'ebbinghaus', 'forgetting-curve', got 'nope'" in result.stdout + result.stderr


def test_config_error_is_raised_by_the_library_too(tmp_path):
    path = tmp_path / "memvault.toml"
    path.write_text("vault = 1\n")
    with pytest.raises(ConfigError, match=r"memvault.toml:1: \[vault\] must be a table, got 1"):
        Config.load(path)


def test_the_decay_models_config_names_are_the_ones_decay_implements():
    from memvault.config.core import DECAY_MODELS
    from memvault.entries.retention import MODELS

    assert set(DECAY_MODELS) == set(MODELS)
