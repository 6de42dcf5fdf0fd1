"""A search reads one snapshot of the index: an update committed while it runs (the server's
concurrent writes, the watcher) cannot make a file's hits vanish from its answer."""

from __future__ import annotations

import threading

import pytest

from memvault.search.index import open_index
from tests.helpers_index import entry, make_vault, write_log


@pytest.mark.slow  # a few seconds of real reindexing / polling; the slow suite runs it
def test_hits_do_not_vanish_while_their_file_is_reindexed(vault_dir):
    vault = make_vault(vault_dir)
    texts = [entry(f"09:{m:02d}", "Observation", f"Laborbuch Eintrag {m}: Probe pipettiert") for m in range(40)]
    rel = write_log(vault_dir, "2026-02-21", *texts)
    stop, empty = threading.Event(), []
    with open_index(vault) as index:
        index.update()

    def reindex() -> None:
        with open_index(vault) as writer:
            n = 0
            while not stop.is_set():  # each update renumbers the file's rows
                n += 1
                write_log(vault_dir, "2026-02-21", *texts, entry("10:00", "Observation", f"Nachtrag {n}"))
                writer.update([rel])

    thread = threading.Thread(target=reindex)
    thread.start()
    try:
        with open_index(vault) as reader:
            for _ in range(120):  # each search races the writer re-numbering the same file
                if not reader.search("Laborbuch pipettiert", limit=5, record_access=False):
                    empty.append(1)
    finally:
        stop.set()
        thread.join()
    assert not empty
