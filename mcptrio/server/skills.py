"""Publishing folders of Agent Skills: the skills extension (SEP-2640) on a server.

::

    server = Server("docs")
    server.add_skills("skills/")                    # every folder below with a SKILL.md
    server.add_skills("team-skills/", prefix="acme")  # skill://acme/<path>/SKILL.md

What a published folder becomes:

- each skill (a directory holding ``SKILL.md``) is a ``skills/list`` / ``skills/get`` entry at
  ``skill://<prefix>/<path below the folder>/SKILL.md``, with its frontmatter as written and a
  complete manifest of its files (``sha256:`` digest and size each, nested skills' files
  included);
- each file is an ordinary resource at ``skill://<skill path>/<file path>`` (``resources/list``,
  ``resources/read``, subscriptions): ``SKILL.md`` as ``text/markdown`` named and described by
  its frontmatter, other files with the MIME type their name suggests, as text when they are
  UTF-8 and as a base64 blob otherwise;
- every directory on the way is a directory resource for ``resources/directory/read``
  (``directoryRead: true`` is declared).

Where bytes come from (the policy, see ``docs/explanation/skills.md``): a read always reads the
file from disk, never from memory, and only a file of the manifest can be read: a URI is looked
up, never turned into a path, so ``..``, ``%2e%2e`` and the like name nothing, and a file swapped
for a link out of the folder is refused. The manifest is checked against the disk (modification
stamps and sizes, directories included) before every ``skills/list`` page, ``skills/get`` and
directory read (``check_disk=True``, the default) and rebuilt for a skill that changed; a read
whose bytes no longer match their digest rebuilds it too. So a changed file changes its digest
at the next request, and the resources' list-changed and updated notifications tell clients.
With ``check_disk=False`` the manifest only changes on :meth:`Skills.reload`. The set of skills
(which folders hold a ``SKILL.md``) is read at publish time and on :meth:`Skills.reload`.

A skill that no longer scans (a file became a link out of the folder, the frontmatter broke, it
grew over a limit) is withdrawn, not forgotten: the same checks scan it again once anything in
its directory changed since it failed (stamps only, no file read while nothing changed), and it
is served again as soon as it scans. Only a file that is a regular file when opened is read: a
FIFO, device or directory in a file's place is refused without waiting on it.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import trio

from ..protocol.base import Request
from ..protocol.errors import InternalError, InvalidParams, ResourceNotFound
from ..protocol.skills_extension import (
    DIRECTORY_MIME_TYPE,
    DIRECTORY_READ,
    SKILL_FILE,
    GetSkillRequest,
    GetSkillResult,
    ListSkillsRequest,
    ListSkillsResult,
    ReadResourceDirectoryRequest,
    ReadResourceDirectoryResult,
    Skill,
    SkillResource,
)
from ..protocol.types import CacheScope, Resource, ResourceContents
from .forwarding import ForwardedResource
from .handler_context import HandlerContext, Route
from .pagination import paginate
from .registry import Registry
from .resources import RegisteredResource, make_resource
from .skill_files import (
    EntryStamp,
    ScannedFile,
    ScannedSkill,
    SkillsError,
    discover,
    disk_stamps,
    read_file,
    scan_skill,
    stamps_changed,
)

__all__ = ["PublishingServer", "Skills", "SkillsError"]

_log = logging.getLogger("mcptrio.server.skills")

SCHEME = "skill://"


@dataclass(frozen=True, slots=True)
class _Published:
    """A skill as served: what was scanned, and the folder it was published from."""

    scanned: ScannedSkill
    root: Path
    prefix: str | None

    @property
    def uri(self) -> str:
        return f"{SCHEME}{self.scanned.skill_path}/{SKILL_FILE}"

    def file_uri(self, file: ScannedFile) -> str:
        return f"{SCHEME}{self.scanned.skill_path}/{file.relative}"

    def entry(self) -> Skill:
        return Skill(
            uri=self.uri,
            frontmatter=self.scanned.frontmatter,
            resources=[
                SkillResource(uri=self.file_uri(f), digest=f.digest, size=f.size)
                for f in self.scanned.files
            ],
        )


@dataclass(frozen=True, slots=True)
class _ServedFile:
    """A file as a resource: where it is, and what its resource says."""

    path: Path
    root: Path
    digest: str
    size: int
    mime_type: str
    name: str
    description: str | None


@dataclass(frozen=True, slots=True)
class _Withdrawn:
    """A skill that no longer scans: as it was last served, and its directory as the disk had it
    when the scan failed (it is scanned again once that differs)."""

    published: _Published
    stamps: dict[str, EntryStamp]


def _changed(withdrawn: list[_Withdrawn]) -> list[_Published]:
    """The withdrawn skills whose directories changed since they failed (blocking)."""
    return [
        w.published for w in withdrawn if disk_stamps(w.published.scanned.directory) != w.stamps
    ]


class PublishingServer(Protocol):
    """What the skills read and change of the server publishing them (a
    :class:`~mcptrio.Server` has it): its resources, where their files are served, and the
    settings of its answers."""

    resources: Registry[RegisteredResource | ForwardedResource]
    page_size: int | None
    cache_ttl_ms: int | None
    cache_scope: CacheScope

    def notify_resource_updated(self, uri: str) -> int: ...


class Skills:
    """The skills a server publishes (``server.skills``; add folders with
    :meth:`Server.add_skills <mcptrio.Server.add_skills>`)."""

    def __init__(self, server: PublishingServer, *, check_disk: bool = True) -> None:
        self._server = server
        #: Whether requests check the manifest against the disk (module docstring).
        self.check_disk = check_disk
        self._folders: list[tuple[Path, str | None]] = []
        self._skills: dict[str, _Published] = {}
        self._withdrawn: dict[str, _Withdrawn] = {}
        self._files: dict[str, _ServedFile] = {}
        self._directories: dict[str, list[str]] = {}
        self._lock = trio.Lock()

    def __repr__(self) -> str:
        return f"<Skills {list(self._skills)!r}>"

    def __len__(self) -> int:
        return len(self._skills)

    @property
    def uris(self) -> list[str]:
        """The ``SKILL.md`` URIs of the published skills, sorted."""
        return sorted(self._skills)

    def capability(self) -> dict[str, Any]:
        """The extension's settings, as declared under ``capabilities.extensions``."""
        return {DIRECTORY_READ: True}

    def routes(self) -> dict[type[Request[Any]], Route]:
        return {
            ListSkillsRequest: self.list_skills,
            GetSkillRequest: self.get_skill,
            ReadResourceDirectoryRequest: self.read_directory,
        }

    # ---------------------------------------------------------------- publishing

    def add_folder(self, path: str | os.PathLike[str], prefix: str | None = None) -> list[str]:
        """Publish every skill under ``path`` (blocking: call it before serving, or use
        :meth:`reload` later); returns their ``SKILL.md`` URIs. :class:`SkillsError` when the
        folder cannot be published; nothing is published then."""
        root = Path(path).resolve()
        scanned = _scan_folder(root, prefix)
        published = {p.uri: p for p in scanned}
        taken = published.keys() & (self._skills.keys() | self._withdrawn.keys())
        if taken:
            raise SkillsError(f"{root}: skills already published at {sorted(taken)}")
        files = _served_files({**self._skills, **published})
        ours = _served_files(published).keys()
        clash = sorted(ours & self._files.keys()) or sorted(
            uri for uri in ours if uri in self._server.resources
        )
        if clash:
            raise SkillsError(f"{root}: a resource is already published at {clash[0]}")
        self._folders.append((root, prefix))
        self._skills.update(published)
        self._sync(files)
        return sorted(published)

    async def reload(self) -> None:
        """Read every published folder again: skills added, removed or changed on disk are
        published as they are now (a folder that no longer publishes keeps its old skills and
        raises :class:`SkillsError`)."""
        async with self._lock:
            scanned = await trio.to_thread.run_sync(self._scan_all)
            self._skills = {p.uri: p for p in scanned}
            self._withdrawn = {}
            self._sync(_served_files(self._skills))

    def _scan_all(self) -> list[_Published]:
        found: list[_Published] = []
        for root, prefix in self._folders:
            found.extend(_scan_folder(root, prefix))
        return found

    def _sync(self, files: dict[str, _ServedFile]) -> None:
        """Make the server's resources the skills' files: ``files`` (the old ones go, new ones
        come, a changed one is replaced and its subscribers told)."""
        resources = self._server.resources
        updated: list[str] = []
        for uri, old in self._files.items():
            new = files.get(uri)
            if new == old:
                continue
            resources.remove(uri)
            if new is not None and new.digest != old.digest:
                updated.append(uri)
        for uri, new in files.items():
            if self._files.get(uri) != new:
                resources.add(uri, self._resource(uri, new))
        self._files = files
        self._directories = _directories(files)
        for uri in updated:
            self._server.notify_resource_updated(uri)

    def _resource(self, uri: str, served: _ServedFile) -> Any:
        async def read() -> ResourceContents:
            return await self._read(uri, served)

        return make_resource(
            read,
            uri=uri,
            name=served.name,
            description=served.description,
            mime_type=served.mime_type,
            size=served.size,
        )

    # ---------------------------------------------------------------- serving

    async def _read(self, uri: str, served: _ServedFile) -> ResourceContents:
        try:
            # Read, hashed and made contents in a worker thread: large files never hold up the
            # event loop (the read is within the server's read budget, :mod:`.read_budget`).
            size, digest, contents = await trio.to_thread.run_sync(_read_contents, uri, served)
        except OSError as exc:  # gone, unreadable, or now a link out of the folder
            _log.warning("skill file %s cannot be read: %s", uri, exc)
            await self._refresh_all()
            raise ResourceNotFound(f"Resource {uri} is no longer served", {"uri": uri}) from None
        if size != served.size or digest != served.digest:
            # Changed on disk since the manifest was made: serve what is there now, and make
            # the manifest say so (the client's check against its entry tells it to refresh),
            # unless the change withdrew the file (its skill broke, or went over a limit).
            await self._refresh_all()
            if uri not in self._files:
                raise ResourceNotFound(f"Resource {uri} is no longer served", {"uri": uri})
        return contents

    async def _current(self, uris: list[str]) -> list[_Published]:
        """The skills at ``uris`` as they are on disk now (when ``check_disk``): a skill whose
        files changed is scanned again, one that no longer scans is withdrawn, a withdrawn one
        whose directory changed is tried again."""
        if not self.check_disk:
            return [self._skills[uri] for uri in uris if uri in self._skills]
        async with self._lock:
            chosen = [self._skills[uri] for uri in uris if uri in self._skills]
            withdrawn = [self._withdrawn[uri] for uri in uris if uri in self._withdrawn]
            stale = await trio.to_thread.run_sync(
                lambda: [p for p in chosen if stamps_changed(p.scanned)] + _changed(withdrawn)
            )
            await self._rescan(stale)
            return [self._skills[uri] for uri in uris if uri in self._skills]

    async def _refresh_all(self) -> None:
        async with self._lock:
            served = list(self._skills.values())
            withdrawn = list(self._withdrawn.values())
            stale = await trio.to_thread.run_sync(
                lambda: [p for p in served if stamps_changed(p.scanned)] + _changed(withdrawn)
            )
            await self._rescan(stale)

    async def _rescan(self, stale: list[_Published]) -> None:
        if not stale:
            return

        def scan() -> dict[str, _Published | _Withdrawn]:
            fresh: dict[str, _Published | _Withdrawn] = {}
            for old in stale:
                # Stamped before the scan: a change made while it reads is a change next time.
                stamps = disk_stamps(old.scanned.directory)
                try:
                    again = scan_skill(old.scanned.skill_path, old.scanned.directory, old.root)
                except (SkillsError, OSError) as exc:
                    _log.warning("skill %s withdrawn: %s", old.uri, exc)
                    fresh[old.uri] = _Withdrawn(old, stamps)
                else:
                    fresh[old.uri] = _Published(again, old.root, old.prefix)
            return fresh

        for uri, outcome in (await trio.to_thread.run_sync(scan)).items():
            if isinstance(outcome, _Withdrawn):
                self._skills.pop(uri, None)
                self._withdrawn[uri] = outcome
            else:
                if self._withdrawn.pop(uri, None) is not None:
                    _log.info("skill %s is served again", uri)
                self._skills[uri] = outcome
        self._sync(_served_files(self._skills))

    def _cache_hints(self) -> dict[str, Any]:
        ttl = self._server.cache_ttl_ms
        return {"ttl_ms": ttl, "cache_scope": None if ttl is None else self._server.cache_scope}

    async def list_skills(
        self, ctx: HandlerContext, request: ListSkillsRequest
    ) -> ListSkillsResult:
        cursor = request.cursor if isinstance(request.cursor, str) else None
        if self._withdrawn:
            await self._current(list(self._withdrawn))  # the ones fine again are listed
        page, next_cursor = paginate("skills", self.uris, cursor, self._server.page_size)
        current = await self._current(list(page))
        return ListSkillsResult(
            skills=[p.entry() for p in current], next_cursor=next_cursor, **self._cache_hints()
        )

    async def get_skill(self, ctx: HandlerContext, request: GetSkillRequest) -> GetSkillResult:
        found = await self._current([request.uri])
        if not found:
            raise InvalidParams(f"No skill is served at {request.uri}", {"uri": request.uri})
        return GetSkillResult(skill=found[0].entry(), **self._cache_hints())

    async def read_directory(
        self, ctx: HandlerContext, request: ReadResourceDirectoryRequest
    ) -> ReadResourceDirectoryResult:
        uri = request.uri
        if self.check_disk:
            await self._refresh_all()
        children = self._directories.get(uri)
        if children is None:
            what = "is not a directory resource" if uri in self._files else "is not served"
            raise InvalidParams(f"{uri} {what}", {"uri": uri})
        cursor = request.cursor if isinstance(request.cursor, str) else None
        # The cursor's kind names the directory (without the ':' the cursor scheme splits on).
        kind = "directory-" + hashlib.sha256(uri.encode()).hexdigest()[:16]
        page, next_cursor = paginate(kind, children, cursor, self._server.page_size)
        return ReadResourceDirectoryResult(
            resources=[self._child(child) for child in page], next_cursor=next_cursor
        )

    def _child(self, uri: str) -> Resource:
        registered = self._server.resources.get(uri)
        if uri in self._files and registered is not None:
            definition = registered.definition
            assert isinstance(definition, Resource)
            return definition
        if uri not in self._directories:
            raise InternalError(f"{uri} vanished while its directory was read")
        return Resource(uri=uri, name=uri.rsplit("/", 1)[-1], mime_type=DIRECTORY_MIME_TYPE)


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _read_contents(uri: str, served: _ServedFile) -> tuple[int, str, ResourceContents]:
    """A served file's size and digest as it is on disk now, and the contents it makes (UTF-8
    text, else a base64 blob); runs in a worker thread. The bytes read are not returned: the
    contents are all the read needs from them, and a large file would be held twice over."""
    data = read_file(served.path, served.root)
    digest = _digest(data)
    try:
        contents = ResourceContents(uri=uri, mime_type=served.mime_type, text=data.decode())
    except UnicodeDecodeError:
        blob = base64.b64encode(data).decode("ascii")
        contents = ResourceContents(uri=uri, mime_type=served.mime_type, blob=blob)
    return len(data), digest, contents


def _scan_folder(root: Path, prefix: str | None) -> list[_Published]:
    return [
        _Published(scan_skill(skill_path, directory, root), root, prefix)
        for skill_path, directory in discover(root, prefix)
    ]


def _served_files(skills: dict[str, _Published]) -> dict[str, _ServedFile]:
    """Every file of ``skills`` as a resource; a nested skill's ``SKILL.md`` is described by its
    own frontmatter, whichever skill lists it."""
    files: dict[str, _ServedFile] = {}
    for published in skills.values():
        for file in published.scanned.files:
            uri = published.file_uri(file)
            if uri in files and uri not in skills:
                continue
            manifest = uri == published.uri
            front = published.scanned.frontmatter
            files[uri] = _ServedFile(
                path=file.path,
                root=published.root,
                digest=file.digest,
                size=file.size,
                mime_type=file.mime_type,
                name=front["name"] if manifest else file.relative.rsplit("/", 1)[-1],
                description=front["description"] if manifest else None,
            )
    return dict(sorted(files.items()))


def _directories(files: dict[str, _ServedFile]) -> dict[str, list[str]]:
    """Every directory the files are in, with its direct children (directories and files)."""
    children: dict[str, set[str]] = {}
    for uri in files:
        parts = uri[len(SCHEME) :].split("/")
        for depth in range(1, len(parts)):
            parent = SCHEME + "/".join(parts[:depth])
            child = SCHEME + "/".join(parts[: depth + 1])
            children.setdefault(parent, set()).add(child)
    return {uri: sorted(kids) for uri, kids in sorted(children.items())}
