"""The house: imports point one way, and no module imports itself back through others.

Every import counts, including those inside functions and under `TYPE_CHECKING`: a lazy
import saves start-up time, it does not change which way a dependency points.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import memvault

PACKAGE = Path(memvault.__file__).resolve().parent

# Each room and the rooms below it that it may import. Bottom first; a room may import any
# room of a lower layer. Same-layer rooms may not import each other unless listed in ALSO.
LAYERS: list[set[str]] = [
    {"errors"},
    {"textsafety", "sqlutil", "gcpause"},
    {"fsio", "derived_db"},
    {"config", "gitio"},
    {"entries"},
    {"layout", "filedates", "forgotten"},
    {"parsed", "semantic"},
    {"check", "search"},
    {"write"},
    {"history", "curate", "watch", "maintain", "sync"},
    {"vault"},
    {"status", "demo", "memorywire", "interop", "context", "ingest"},
    {"serve"},
    {"cli"},
    {"__main__"},
]
ALSO = {
    ("history", "search"),  # as-of ranking is search's ranking at another time
    ("curate", "search"),   # curate reads access counts
    ("watch", "search"),    # the watcher keeps the index current
    ("watch", "sync"),      # watch --commit and --sync commit and sync through the sync room
    ("filedates", "layout"),  # dating asks git about the selected files only
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, name: str) -> set[str]:
    """Every memvault module `path` imports, anywhere in the file."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "memvault")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "memvault":
                continue
            for alias in node.names:
                sub = f"{mod}.{alias.name}"
                found.add(sub if sub in ALL_MODULES else mod)
    found.discard(name)
    return found


def graph(root: Path) -> dict[str, set[str]]:
    return {module_name(p): imports_of(p, module_name(p)) for p in sorted(root.rglob("*.py"))}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


ALL_MODULES = {module_name(p) for p in PACKAGE.rglob("*.py")}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def layer_of(r: str) -> int:
    for i, rooms in enumerate(LAYERS):
        if r in rooms:
            return i
    raise AssertionError(f"room {r!r} is not in LAYERS: add it to tests/test_architecture.py and docs/architecture.md")


def test_no_import_cycles() -> None:
    found = cycles(graph(PACKAGE))
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_imports_point_down() -> None:
    wrong = []
    for mod, deps in graph(PACKAGE).items():
        src = room(mod)
        if src == "__init__":
            continue
        for dep in deps:
            dst = room(dep)
            if dst in (src, "__init__"):
                continue
            if layer_of(dst) < layer_of(src) or (src, dst) in ALSO:
                continue
            wrong.append(f"{mod} -> {dep}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(sorted(wrong))


def test_the_cycle_finder_finds_a_cycle_inside_functions(tmp_path: Path) -> None:
    pkg = tmp_path / "memvault"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n")
    (pkg / "c.py").write_text("def g():\n    import memvault.a\n")
    global PACKAGE, ALL_MODULES
    saved = PACKAGE, ALL_MODULES
    try:
        PACKAGE = pkg
        ALL_MODULES = {module_name(p) for p in pkg.rglob("*.py")}
        assert cycles(graph(pkg)) == [["memvault.a", "memvault.c", "memvault.sub.b"]]
    finally:
        PACKAGE, ALL_MODULES = saved


# Who may start a process: gitio/run.py starts every git process; curate's `--with` runs the
# user's own command (never git). Everything else calls git through memvault.gitio.
PROCESS_STARTERS = {"memvault.gitio.run", "memvault.curate.with_command"}
PROCESS_MODULES = {"subprocess", "pty", "multiprocessing", "asyncio.subprocess", "concurrent.futures.process"}
GIT_LIBRARIES = {"git", "pygit2", "sh", "plumbum", "pexpect"}  # libraries that run git for you
OS_STARTERS = re.compile(r"^(system|popen|fork|forkpty|exec\w*|spawn\w*|posix_spawnp?)$")


def process_starts(path: Path) -> list[str]:
    """How the module at `path` could start a process: imports and os calls, by line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
            if node.module == "os":
                names += [f"os.{a.name}" for a in node.names if OS_STARTERS.match(a.name)]
            elif node.module in ("asyncio", "concurrent.futures"):
                names += [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os":
            names = [f"os.{node.attr}"] if OS_STARTERS.match(node.attr) else []
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if name in PROCESS_MODULES or top in GIT_LIBRARIES or name.startswith("os."):
                found.append(f"{name} (line {node.lineno})")
    return found


def starters(root: Path) -> dict[str, list[str]]:
    out = {}
    for path in sorted(root.rglob("*.py")):
        found = process_starts(path)
        if found:
            out[".".join(path.relative_to(root.parent).with_suffix("").parts)] = found
    return out


def test_every_git_process_starts_in_the_git_layer() -> None:
    found = starters(PACKAGE)
    assert set(found) == PROCESS_STARTERS, "modules that may start a process:\n" + "\n".join(
        f"{m}: {', '.join(how)}" for m, how in sorted(found.items()))


def test_the_user_command_runner_never_names_git() -> None:
    tree = ast.parse((PACKAGE / "curate" / "with_command.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == "git"]


def test_the_process_finder_finds_every_way_to_start_one(tmp_path: Path) -> None:
    pkg = tmp_path / "memvault"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lazy.py").write_text("def f():\n    import subprocess\n")
    (pkg / "fromimp.py").write_text("from subprocess import run\n")
    (pkg / "gitpy.py").write_text("def f():\n    import git\n    from git import Repo\n")
    (pkg / "oscall.py").write_text("import os\nos.execvp('git', ['git'])\nos.system('git status')\n")
    (pkg / "osname.py").write_text("from os import posix_spawnp\n")
    (pkg / "quiet.py").write_text("import os, shlex\nos.getcwd()\n")
    assert starters(pkg) == {
        "memvault.fromimp": ["subprocess (line 1)"],
        "memvault.gitpy": ["git (line 2)", "git (line 3)"],
        "memvault.lazy": ["subprocess (line 2)"],
        "memvault.oscall": ["os.execvp (line 2)", "os.system (line 3)"],
        "memvault.osname": ["os.posix_spawnp (line 1)"],
    }

