"""The ``.py`` files a reloading server watches, and how they are seen to change: by polling.

A scan walks the watched folders with ``os.scandir`` and records each ``.py`` file's
modification time, size and inode (an editor that saves by writing a new file and renaming it
changes the inode even within one tick of the clock). Folders that hold no code of the
server's own are not entered: hidden ones (``.git``, ``.venv``), ``__pycache__``,
``node_modules``, ``site-packages`` and any virtualenv (a folder with a ``pyvenv.cfg``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from .errors import usage_error
from .loading import parse_server_spec

__all__ = ["Snapshot", "changed_files", "scan", "watched_folder"]

#: A file's path and what tells its versions apart: (mtime in ns, size, inode).
Snapshot = Mapping[str, tuple[int, int, int]]

_SKIPPED = frozenset({"__pycache__", "node_modules", "site-packages"})


def watched_folder(target: str) -> Path:
    """The folder whose ``.py`` files make ``target`` reload: a file's folder, a package's
    folder, or a lone module's folder; a usage error when there is no such file or module."""
    spec = parse_server_spec(target)
    if spec.is_file:
        path = Path(spec.source)
        if not path.is_file():
            raise usage_error(f"no such file: {spec.source}")
        return path.resolve().parent
    top = spec.source.partition(".")[0]
    # Found as `mcptrio run` will import it: with the current folder first on sys.path.
    sys.path.insert(0, os.getcwd())
    try:
        found = importlib.util.find_spec(top)
    finally:
        sys.path.pop(0)
    if found is None or (found.origin is None and not found.submodule_search_locations):
        raise usage_error(f"no module named {top!r} (from {os.getcwd()})")
    if found.submodule_search_locations:
        return Path(next(iter(found.submodule_search_locations))).resolve()
    return Path(str(found.origin)).resolve().parent


def scan(folders: Iterable[Path]) -> dict[str, tuple[int, int, int]]:
    """Every ``.py`` file under ``folders`` (see the module docstring for what is skipped)."""
    found: dict[str, tuple[int, int, int]] = {}
    for folder in folders:
        _scan(str(folder), found)
    return found


def changed_files(before: Snapshot, after: Snapshot) -> list[str]:
    """The files added, removed or changed between two scans, sorted."""
    return sorted(
        path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
    )


def _scan(folder: str, found: dict[str, tuple[int, int, int]]) -> None:
    try:
        entries = os.scandir(folder)
    except OSError:
        # Gone, or not readable: it holds nothing to watch.
        return
    with entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if _holds_code(entry):
                        _scan(entry.path, found)
                elif entry.name.endswith(".py"):
                    status = entry.stat()
                    found[entry.path] = (status.st_mtime_ns, status.st_size, status.st_ino)
            except OSError:
                # Removed while scanning: the next scan sees it gone.
                continue


def _holds_code(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith(".") or entry.name in _SKIPPED:
        return False
    return not os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))
