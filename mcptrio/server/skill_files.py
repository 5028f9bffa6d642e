"""Reading a published folder of Agent Skills from disk (blocking: run in a worker thread).

:func:`discover` finds the skills under a folder (every directory holding a ``SKILL.md``) and
:func:`scan_skill` reads one: every file below its directory (nested skills' files included, as
SEP-2640 asks of a complete manifest), each with its size, SHA-256 digest and modification
stamp, and its ``SKILL.md`` frontmatter. Everything a client could object to is refused here,
at publish time, with a :class:`SkillsError` that names the file: a missing or malformed
frontmatter, a name that breaks the Agent Skills rules or differs from its directory's, a skill
over the SEP's limits (512 files, 16 MiB), a path segment that is not a plain URI segment, a
symbolic link leading out of the published folder.

Hidden entries (names starting with ``.``: ``.git``, ``.DS_Store``) are not published. Symbolic
links are followed only to files inside the published folder; a link to a directory is not
followed (no cycles, no way out).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from ..protocol.errors import LocalError
from ..protocol.skill_frontmatter import FrontmatterError, parse_frontmatter
from ..protocol.skills_extension import (
    MAX_RESOURCES_PER_SKILL,
    MAX_SKILL_BYTES,
    SKILL_FILE,
    valid_skill_name,
)

__all__ = [
    "ScannedFile",
    "ScannedSkill",
    "SkillsError",
    "discover",
    "disk_stamps",
    "inside",
    "read_file",
    "scan_skill",
    "stamps_changed",
]

# A path segment that needs no percent-encoding and is a valid reg-name (the first segment is
# the URI's authority).
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")

_TEXT_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".py": "text/x-python"}


class SkillsError(LocalError, ValueError):
    """A folder of skills that cannot be published as it is (the message says why and where)."""


@dataclass(frozen=True, slots=True)
class ScannedFile:
    """One file of a skill as read from disk."""

    #: Its path below the skill's directory, ``/``-separated.
    relative: str
    path: Path
    size: int
    digest: str
    mtime_ns: int
    mime_type: str


@dataclass(frozen=True, slots=True)
class ScannedSkill:
    """One skill as read from disk: where it is, its frontmatter and every file below it."""

    skill_path: str
    directory: Path
    frontmatter: dict[str, Any]
    files: tuple[ScannedFile, ...]
    #: The modification stamp of every directory walked (a file added or removed changes one).
    directories: dict[Path, int] = field(default_factory=dict)


#: What :func:`disk_stamps` says of one entry: type, inode, size and modification stamp, as
#: ``lstat`` sees them and, for a symbolic link, as its target does (``None``: unreadable).
EntryStamp: TypeAlias = tuple[tuple[int, int, int, int] | None, ...]
#: The entries :func:`disk_stamps` stamps at most (files and folders; a skill holds at most
#: ``MAX_RESOURCES_PER_SKILL`` files).
MAX_STAMPED_ENTRIES = 4 * MAX_RESOURCES_PER_SKILL


def mime_type_of(name: str) -> str:
    suffix = os.path.splitext(name)[1].lower()
    if suffix in _TEXT_TYPES:
        return _TEXT_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(name, strict=False)
    return guessed or "application/octet-stream"


# Opening never waits (a FIFO opens at once instead of waiting for a writer) and never follows a
# link in the last component (the path opened is already resolved: a link put there since is
# refused rather than followed out of the folder).
_DIRECTORY_FLAGS = getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_BINARY", 0)
)


def _within(resolved: Path, root: Path) -> bool:
    return resolved == root or root in resolved.parents


def _open_below(root: Path, relative: Path) -> int:
    """Open ``root / relative`` one component at a time, following no link on the way: a
    directory swapped for a link out of the folder after ``relative`` was resolved makes the
    open fail, instead of leading outside (``O_NOFOLLOW`` alone covers only the last
    component)."""
    *folders, name = relative.parts
    directory = os.open(root, os.O_RDONLY | _DIRECTORY_FLAGS)
    try:
        for folder in folders:
            below = os.open(folder, os.O_RDONLY | _DIRECTORY_FLAGS, dir_fd=directory)
            os.close(directory)
            directory = below
        return os.open(name, _OPEN_FLAGS, dir_fd=directory)
    finally:
        os.close(directory)


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved, symbolic links followed) is ``root`` or below it."""
    return _within(Path(os.path.realpath(path)), root)


def read_file(path: Path, root: Path) -> bytes:
    """The bytes of ``path`` (at most one more than a skill may hold), refusing with ``OSError``
    one that resolves outside ``root`` (a file swapped for a link since it was published) or
    that is not a regular file once opened (a FIFO, a device, a directory).

    Nothing here blocks on what the file is: a FIFO put in a file's place is opened without
    waiting for a writer and refused, so it cannot hold the worker thread (and, many reads later,
    every thread Trio lends to synchronous code)."""
    resolved = Path(os.path.realpath(path))
    if not _within(resolved, root) or resolved == root:
        raise PermissionError(f"{path} leads outside the published folder")
    fd = _open_below(root, resolved.relative_to(root))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        with open(fd, "rb", closefd=False) as file:
            return file.read(MAX_SKILL_BYTES + 1)
    finally:
        os.close(fd)


def _check_segment(segment: str, where: str) -> None:
    if not _SEGMENT.fullmatch(segment) or segment in (".", ".."):
        raise SkillsError(
            f"{where}: {segment!r} cannot be a URI path segment (use letters, digits and . _ ~ -)"
        )


def discover(root: Path, prefix: str | None) -> list[tuple[str, Path]]:
    """The skills under ``root``: ``(skill path, directory)`` pairs, sorted by skill path.

    Every directory below ``root`` that holds a ``SKILL.md`` is a skill, at its path below
    ``root``; a ``root`` that holds one is a skill itself, named after it (and the skills nested
    in it are below that name). ``prefix`` (``/``-separated) goes in front of every skill path.
    """
    if not root.is_dir():
        raise SkillsError(f"{root} is not a directory")
    prefix_parts = [part for part in (prefix or "").split("/") if part]
    for part in prefix_parts:
        _check_segment(part, f"prefix {prefix!r}")
    # A root that is a skill itself is published under its own name (its nested skills too).
    if (root / SKILL_FILE).is_file():
        prefix_parts.append(root.name)
    found: list[tuple[str, Path]] = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        if SKILL_FILE in filenames:
            relative = Path(directory).relative_to(root).parts
            found.append(("/".join([*prefix_parts, *relative]), Path(directory)))
    if not found:
        raise SkillsError(f"{root}: no {SKILL_FILE} found (a skill is a folder with one)")
    for skill_path, skill_directory in found:
        for part in skill_path.split("/"):
            _check_segment(part, str(skill_directory))
    return sorted(found)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def scan_skill(skill_path: str, directory: Path, root: Path) -> ScannedSkill:
    """Read the skill at ``directory`` (published at ``skill_path`` from the folder ``root``,
    resolved); :class:`SkillsError` for anything a client would reject (module docstring)."""
    name = skill_path.rsplit("/", 1)[-1]
    where = str(directory / SKILL_FILE)
    if not valid_skill_name(name):
        raise SkillsError(
            f"{where}: {name!r} is not a valid skill name (1-64 characters: lowercase letters,"
            " digits and single hyphens, not at either end)"
        )
    files: list[ScannedFile] = []
    directories: dict[Path, int] = {}
    total = 0
    for current, dirnames, filenames in os.walk(directory):
        here = Path(current)
        directories[here] = here.stat().st_mtime_ns
        kept = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            if (here / d).is_symlink():
                raise SkillsError(f"{here / d}: a link to a directory is not published")
            kept.append(d)
        dirnames[:] = kept
        for filename in sorted(filenames):
            if filename.startswith("."):
                continue
            path = here / filename
            relative = path.relative_to(directory).as_posix()
            for part in relative.split("/"):
                _check_segment(part, str(path))
            if not inside(path, root):
                raise SkillsError(f"{path}: a link leading outside the published folder {root}")
            info = path.stat()
            if not stat.S_ISREG(info.st_mode):
                continue
            data = read_file(path, root)
            total += len(data)
            if len(files) + 1 > MAX_RESOURCES_PER_SKILL or total > MAX_SKILL_BYTES:
                raise SkillsError(
                    f"{directory}: a skill may hold at most {MAX_RESOURCES_PER_SKILL} files and"
                    f" {MAX_SKILL_BYTES} bytes (SEP-2640 limits); this one holds more"
                )
            files.append(
                ScannedFile(
                    relative=relative,
                    path=path,
                    size=len(data),
                    digest=_digest(data),
                    mtime_ns=info.st_mtime_ns,
                    mime_type="text/markdown" if filename == SKILL_FILE else mime_type_of(filename),
                )
            )
    manifest = next((f for f in files if f.relative == SKILL_FILE), None)
    if manifest is None:
        raise SkillsError(f"{directory}: a skill needs a {SKILL_FILE} at its root")
    try:
        text = read_file(manifest.path, root).decode("utf-8")
    except UnicodeDecodeError:
        raise SkillsError(f"{where}: SKILL.md is not UTF-8 text") from None
    try:
        frontmatter = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise SkillsError(f"{where}: {exc}") from None
    if frontmatter["name"] != name:
        raise SkillsError(
            f"{where}: the frontmatter name {frontmatter['name']!r} must equal the skill's"
            f" directory name {name!r}"
        )
    return ScannedSkill(skill_path, directory, frontmatter, tuple(files), directories)


def stamps_changed(skill: ScannedSkill) -> bool:
    """Whether any file or directory of ``skill`` changed on disk since it was scanned (a file
    edited, added or removed): a modification stamp or size differs, or one is gone."""
    try:
        for directory, stamp in skill.directories.items():
            if directory.stat().st_mtime_ns != stamp:
                return True
        for file in skill.files:
            info = file.path.stat()
            if info.st_mtime_ns != file.mtime_ns or info.st_size != file.size:
                return True
    except OSError:
        return True
    return False


def _stamp(path: str, follow: bool) -> tuple[int, int, int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=follow)
    except OSError:
        return None
    return (info.st_mode, info.st_ino, info.st_size, info.st_mtime_ns)


def disk_stamps(directory: Path) -> dict[str, EntryStamp]:
    """Everything :func:`scan_skill` would look at below ``directory``, stamped without reading
    a file: every directory walked and every entry in it (hidden ones left out), each with its
    :data:`EntryStamp`. Two calls that agree mean a scan would read what it read before, so a
    skill that failed to scan needs no new scan until they differ.

    The walk stops past :data:`MAX_STAMPED_ENTRIES`: a tree that large is over what a skill may
    hold anyway, and a skill withdrawn for it is checked on every listing, so the check stays
    bounded (the entries walked first show a change made among them, and ``reload()`` any)."""
    stamps: dict[str, EntryStamp] = {}
    for current, dirnames, filenames in os.walk(directory):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        stamps[current] = (_stamp(current, False),)
        for name in (*dirnames, *filenames):
            if len(stamps) > MAX_STAMPED_ENTRIES:
                return stamps
            if name.startswith("."):
                continue
            path = os.path.join(current, name)
            here = _stamp(path, False)
            linked = here is not None and stat.S_ISLNK(here[0])
            stamps[path] = (here, _stamp(path, True)) if linked else (here,)
    return stamps
