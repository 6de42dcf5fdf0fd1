"""What retention costs: the models alone, the stored said-again pairs, and `list` with retention.

    python bench/synth.py /tmp/mv-100k
    python bench/bench_retention.py /tmp/mv-100k [--entries 20] [--skip-build]

Prints, in one run:
- the floor: parsing the vault, and `list`'s work without retention (the entries' JSON shapes);
- the models' cost per entry (presentations from own time and reconfirmations);
- the said-again pairs (search/said_store.py), kept in a temporary folder (the vault's own
  `.memvault/` is not touched): the full build (signatures + join), the sync of an unchanged
  vault, of one appended entry and of one daily file whose entries all changed;
- `list` as before (no retention), and now (`Vault.shapes`: retention for every entry from the
  stored pairs in one pass, the cyclic collector paused), and retention's own cost with the
  collector paused in both; alternately, best of `--rounds`;
- retention alone for the live entries: the one pass beside each entry asked alone;
- one entry's retention found on demand (`presentations.SaidAgain`, what a timeline without a
  vault uses), oldest and newest entries.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memvault.entries import retention
from memvault.entries.decay import elapsed_ticks, vault_params
from memvault.entries.presentations import SaidAgain
from memvault.gcpause import no_gc
from memvault.parsed import ParsedVault
from memvault.search.said_store import SaidStore, StoredSaidAgain
from memvault.vault import Vault


def clock(label: str, fn, *args):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn(*args)
    took = time.perf_counter() - t
    print(f"{label}: {took:.2f} s")
    return out, took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault")
    ap.add_argument("--entries", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="list with and without retention, alternately; best of")
    ap.add_argument("--skip-build", action="store_true", help="reuse the pairs of an earlier run's folder")
    args = ap.parse_args()
    now = datetime.now(UTC)

    plain = ParsedVault.open(args.vault)
    clock("floor: parse + timeline", lambda v=plain: v.timeline)
    dated = [e for e in plain.timeline.events if e.timestamp is not None]
    models(plain, dated, now)

    store_root = Path(tempfile.gettempdir()) / "memvault-bench-retention"
    tl = plain.timeline
    texts = list(dict.fromkeys(e.content for e in tl.events
                               if e.timestamp is not None and e.content.strip() and tl.by_id.get(e.id) is e))
    threshold = StoredSaidAgain(store_root, tl).threshold
    if not args.skip_build:
        (store_root / ".memvault" / "said.sqlite").unlink(missing_ok=True)
        clock(f"said-again pairs, full build ({len(texts)} texts)", SaidStore(store_root, threshold).sync, texts)
    clock("said-again pairs, sync unchanged", SaidStore(store_root, threshold).sync, texts)
    appended = [*texts, "Lena's daughter Mia is allergic to peanuts, keep snacks nut-free."]
    clock("said-again pairs, sync one appended entry", SaidStore(store_root, threshold).sync, appended)
    day = next(f for f in plain.files if f.startswith("memory/"))
    mine = {e.content for e in plain.files[day].events}
    changed = [t + " (edited)" if t in mine else t for t in texts]
    clock(f"said-again pairs, sync one changed daily file ({len(mine)} entries)",
          SaidStore(store_root, threshold).sync, changed)
    clock("said-again pairs, sync back to unchanged", SaidStore(store_root, threshold).sync, texts)

    del plain, tl, texts, changed, appended  # 100k entries alive would slow every collector pass below
    runs: dict[str, list[tuple[float, float]]] = {"before": [], "paused": [], "now": []}
    for _ in range(args.rounds):  # alternately: a busy machine slows all alike
        runs["before"].append(listing(args.vault, now, None, pause=False))
        runs["paused"].append(listing(args.vault, now, None, pause=True))
        runs["now"].append(listing(args.vault, now, store_root, pause=True))
    parse = min(p for rs in runs.values() for p, _ in rs)
    b, p, w = (min(s for _, s in runs[k]) for k in ("before", "paused", "now"))
    print(f"list, best of {args.rounds}: parse + timeline + live entries {parse:.2f} s, then the JSON shapes: "
          f"as before (no retention, collector on) {b:.2f} s; now (retention, collector paused: Vault.shapes) "
          f"{w:.2f} s; without retention, collector paused {p:.2f} s")
    print(f"  list now vs before: {(parse + w) / (parse + b) * 100 - 100:+.0f}%; retention's own cost: "
          f"{w - p:+.2f} s = {(w - p) / (parse + p) * 100:+.0f}% of list without it")
    one_pass(args.vault, now, store_root, args.rounds)
    vault = ParsedVault.open(args.vault)
    dated = [e for e in vault.timeline.events if e.timestamp is not None]
    on_demand(vault, dated, now, args.entries)


def one_pass(root: str, now: datetime, store_root: Path, rounds: int) -> None:
    """Retention alone for `list`'s live entries, pairs synced: the one pass `Vault.shapes` makes
    (`Timeline.retentions`) beside each entry asked alone (`Timeline.retention`), best of `rounds`."""
    vault = Vault.open(root)
    vault.timeline.said_again_source = lambda tl: StoredSaidAgain(store_root, tl)
    live = vault.entries(at=now)
    tl = vault.timeline
    t = time.perf_counter()
    tl.retentions(live[:1], now)
    print(f"retention: first question (the vault's texts read, the stored pairs synced): {time.perf_counter() - t:.2f} s")
    best: dict[str, float] = {}
    for _ in range(rounds):
        for label, fn in (("one pass", lambda: tl.retentions(live, now)),
                          ("each alone", lambda: [tl.retention(e, now).to_dict() for e in live])):
            with no_gc():
                t = time.perf_counter()
                fn()
                best[label] = min(best.get(label, 1e9), time.perf_counter() - t)
    print("retention alone for {} live entries, best of {}: {}".format(len(live), rounds, "; ".join(
        f"{k} {v:.2f} s ({v / len(live) * 1e6:.1f} µs an entry)" for k, v in best.items())))


def listing(root: str, now: datetime, store_root: Path | None, *, pause: bool) -> tuple[float, float]:
    """What `memvault list` computes: parse and the live entries, then their JSON shapes, with
    retention from the pairs stored under `store_root` or without (ParsedVault's shapes), the
    cyclic collector paused around the shapes or not. Returns the two times."""
    gc.collect()
    t = time.perf_counter()
    vault = Vault.open(root) if store_root is not None else ParsedVault.open(root)
    if store_root is not None:
        vault.timeline.said_again_source = lambda tl: StoredSaidAgain(store_root, tl)
    live = vault.entries(at=now)
    parsed = time.perf_counter() - t
    t = time.perf_counter()
    with no_gc() if pause else contextlib.nullcontext():
        if isinstance(vault, Vault):  # what `list` calls: the retentions in one pass (Timeline.retentions)
            shapes = vault.shapes(live, now)
        else:  # ParsedVault.as_dict, without its call per entry (as Vault.shapes)
            tl = vault.timeline
            shapes = [tl.to_dict(e, now) for e in live]
    took = time.perf_counter() - t
    assert all(("retention" in d) == (store_root is not None) for d in shapes)
    return parsed, took


def models(plain: ParsedVault, dated: list, now: datetime) -> None:  # type: ignore[type-arg]
    tl = plain.timeline
    params, cfg = vault_params(tl.config), tl.config
    for model in retention.MODELS:
        t = time.perf_counter()
        for e in dated:
            times = [e.timestamp, *(tl.by_id[r].timestamp for r in tl.reconfirmed_by.get(e.id, ()))]
            ages = sorted(elapsed_ticks(x, now, cfg.decay_tick) for x in times if x is not None)
            m = retention.Memory(ages[-1], tuple(ages[:-1]), retention.band(e.importance), 0)
            retention.retention(model, m, params)
        took = time.perf_counter() - t
        print(f"model {model}: {took / len(dated) * 1e6:.2f} µs an entry, all {len(dated)}: {took:.2f} s")


def on_demand(plain: ParsedVault, dated: list, now: datetime, n: int) -> None:  # type: ignore[type-arg]
    said = SaidAgain(plain.timeline)
    for label, chosen in (("oldest", dated[:n]), ("newest", dated[-n:])):
        t = time.perf_counter()
        for e in chosen:
            said.of(e)
        print(f"said again on demand, {label} {len(chosen)}: {(time.perf_counter() - t) / len(chosen) * 1e3:.1f} ms "
              "an entry (the first also lower-cases the vault's texts once)")


if __name__ == "__main__":
    main()
