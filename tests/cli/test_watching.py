"""What a reloading server watches, and what counts as a change (``mcptrio.cli.watching``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcptrio.cli.errors import CliError
from mcptrio.cli.watching import changed_files, scan, watched_folder


def test_a_scan_sees_the_py_files_under_the_folder_and_not_elsewhere(tmp_path: Path) -> None:
    for name in ["app.py", "lib/tools.py", "lib/deep/more.py", "notes.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    # Folders that hold no code of the server's own.
    for name in [".git/hook.py", ".venv/x.py", "__pycache__/app.py", "node_modules/a/b.py"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    (tmp_path / "env" / "lib").mkdir(parents=True)
    (tmp_path / "env" / "pyvenv.cfg").write_text("")
    (tmp_path / "env" / "lib" / "site.py").write_text("")
    found = {Path(path).relative_to(tmp_path).as_posix() for path in scan([tmp_path])}
    assert found == {"app.py", "lib/tools.py", "lib/deep/more.py"}


def test_an_edit_an_addition_a_removal_and_a_replacement_are_changes(tmp_path: Path) -> None:
    app, tools = tmp_path / "app.py", tmp_path / "tools.py"
    app.write_text("one")
    tools.write_text("x")
    before = scan([tmp_path])
    assert changed_files(before, scan([tmp_path])) == []
    app.write_text("two")  # the same size: the time tells
    stamp = os.stat(app).st_mtime_ns + 1_000_000_000
    os.utime(app, ns=(stamp, stamp))
    assert changed_files(before, scan([tmp_path])) == [str(app)]
    tools.unlink()
    (tmp_path / "new.py").write_text("")
    assert changed_files(before, scan([tmp_path])) == sorted(
        [str(app), str(tools), str(tmp_path / "new.py")]
    )


def test_a_file_saved_by_renaming_a_new_one_over_it_is_a_change(tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("one")
    before = scan([tmp_path])
    replacement = tmp_path / "app.py.tmp"
    replacement.write_text("two")
    status = os.stat(app)
    os.utime(replacement, ns=(status.st_atime_ns, status.st_mtime_ns))
    os.replace(replacement, app)
    assert changed_files(before, scan([tmp_path])) == [str(app)]


def test_the_watched_folder_is_the_files_the_packages_or_the_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app.py").write_text("")
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    assert watched_folder("app.py") == tmp_path
    assert watched_folder(f"{tmp_path / 'app.py'}:server") == tmp_path
    assert watched_folder("app") == tmp_path
    assert watched_folder("pkg.sub.server:make") == tmp_path / "pkg"
    with pytest.raises(CliError, match=r"no such file: gone\.py"):
        watched_folder("gone.py")
