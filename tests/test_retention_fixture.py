"""tests/data/retention under each model gives the statuses docs/retention.md shows, checked by
hand here; switching models changes no file of it."""

from __future__ import annotations

import math
import shutil
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memvault.config.core import Config
from memvault.entries.timeline import Timeline
from memvault.vault import Vault

from .conftest import DATA

BERLIN = ZoneInfo("Europe/Berlin")
APRIL = datetime(2026, 4, 1, 12, tzinfo=BERLIN)


def days(since: str, at: datetime = APRIL) -> float:
    return (at - datetime.fromisoformat(since).replace(tzinfo=BERLIN)).total_seconds() / 86400


def logistic(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def under(model: str, root=DATA / "retention") -> Timeline:
    with Vault.open(root) as vault:
        events = list(vault.events)
    return Timeline(events, Config.from_dict({"vault": {"timezone": "Europe/Berlin"}, "decay": {"model": model}}))


@pytest.mark.parametrize(("model", "entry", "expected", "status"), [
    # the allergy (high) was said again on 2026-02-20 08:05: exponential counts from there
    ("exponential", "2026-01-05T09:10", 0.95 ** days("2026-02-20T08:05"), "fading"),
    # tabs (low), never repeated: 0.95^86.0 = 0.012
    ("exponential", "2026-01-05T11:30", 0.95 ** days("2026-01-05T11:30"), "forgotten"),
    # the backup decision, reconfirmed on 2026-02-20 14:00
    ("exponential", "2026-01-05T16:45", 0.95 ** days("2026-02-20T14:00"), "fading"),
    # seed 001, high, two presentations: ln(86.1^-.5 + 40.2^-.5) + ln 1.5 + 2.5 → 0.83
    ("forgetting-curve", "2026-01-05T09:10",
     logistic(math.log(days("2026-01-05T09:10") ** -0.5 + days("2026-02-20T08:05") ** -0.5) + math.log(1.5) + 2.5),
     "active"),
    # low, one presentation: -0.5 ln 86.0 + ln 0.5 + 2.5 → 0.40 (the curve e^(-86/50) = 0.18 is lower)
    ("forgetting-curve", "2026-01-05T11:30",
     logistic(-0.5 * math.log(days("2026-01-05T11:30")) + math.log(0.5) + 2.5), "fading"),
])
def test_fixture_statuses_by_hand(model, entry, expected, status):
    tl = under(model)
    r = tl.retention(tl.by_id[entry], APRIL)
    assert r.value == pytest.approx(expected, rel=1e-9)
    assert r.status == status


def test_switching_models_changes_no_file(vault_dir):
    root = vault_dir / "copy"
    shutil.copytree(DATA / "retention", root)
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    seen = set()
    for model in ("exponential", "forgetting-curve", "ebbinghaus"):
        (root / "memvault.toml").write_text(f'[vault]\ntimezone = "Europe/Berlin"\n\n[decay]\nmodel = "{model}"\n')
        with Vault.open(root) as vault:
            seen.add(tuple(vault.timeline.retention(e, APRIL).status for e in vault.timeline.events))
    (root / "memvault.toml").write_text(before[Path("memvault.toml")].decode())
    after = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file() and ".memvault" not in p.parts}
    assert after == before
    assert len(seen) == 2  # exponential and ebbinghaus agree; forgetting-curve differs
