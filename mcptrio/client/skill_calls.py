"""The client's calls of the skills extension (SEP-2640): :class:`SkillCalls`.

A base of :class:`~.client.Client`: listing and getting skill entries, and reading their files
verified against them (the checks are in :mod:`.skills`). Nothing is read before it is asked
for: listing reads no file.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar, Unpack

from ..protocol.skills_extension import (
    GetSkillRequest,
    ListSkillsRequest,
    ListSkillsResult,
    ReadResourceDirectoryRequest,
    ReadResourceDirectoryResult,
    Skill,
)
from .options import CallOptions
from .skills import SkillFile, skill_file_uri, verified_file

if TYPE_CHECKING:
    from ..protocol.base import Request, Result
    from ..protocol.types import ReadResourceResult
    from ..protocol.types.common import PaginatedResult

__all__ = ["SkillCalls"]

_ResultT = TypeVar("_ResultT", bound="Result")
_PageT = TypeVar("_PageT", bound="PaginatedResult")
_ItemT = TypeVar("_ItemT")


class SkillCalls:
    """``skills/list``, ``skills/get``, verified skill files and ``resources/directory/read``."""

    if TYPE_CHECKING:
        # What these need of the client (``Client`` has them).

        async def request(
            self, request: Request[_ResultT], /, **options: Unpack[CallOptions]
        ) -> _ResultT: ...

        async def read_resource(
            self, uri: str, **options: Unpack[CallOptions]
        ) -> ReadResourceResult: ...

        def _items(
            self,
            list_page: Callable[..., Awaitable[_PageT]],
            items_of: Callable[[_PageT], list[_ItemT]],
            options: CallOptions,
        ) -> AsyncIterator[_ItemT]: ...

    async def list_skills(
        self, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ListSkillsResult:
        """One page of ``skills/list`` (reads no file: see :mod:`.skills`)."""
        return await self.request(ListSkillsRequest(cursor=cursor), **options)

    def iter_skills(self, **options: Unpack[CallOptions]) -> AsyncIterator[Skill]:
        """Every skill entry, page after page."""
        return self._items(self.list_skills, lambda page: page.skills, options)

    async def get_skill(self, uri: str, **options: Unpack[CallOptions]) -> Skill:
        """The entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``)."""
        return (await self.request(GetSkillRequest(uri=uri), **options)).skill

    async def read_skill_file(
        self,
        skill: Skill,
        path: str,
        *,
        allow_dynamic: bool = False,
        **options: Unpack[CallOptions],
    ) -> SkillFile:
        """Read a file of ``skill`` (a URI, or a path relative to the skill's root) and return
        it only if it matches the entry; :class:`~.skills.SkillVerificationError` otherwise."""
        uri = skill_file_uri(skill, path)
        result = await self.read_resource(uri, **options)
        return verified_file(skill, uri, result, allow_dynamic=allow_dynamic)

    async def load_skill(
        self, skill: Skill, *, allow_dynamic: bool = False, **options: Unpack[CallOptions]
    ) -> SkillFile:
        """Read the skill's ``SKILL.md``, verified (size, digest, frontmatter)."""
        return await self.read_skill_file(skill, skill.uri, allow_dynamic=allow_dynamic, **options)

    async def read_directory(
        self, uri: str, cursor: str | None = None, **options: Unpack[CallOptions]
    ) -> ReadResourceDirectoryResult:
        """One page of ``resources/directory/read``: the direct children of ``uri`` (the server
        must declare ``directoryRead``)."""
        request = ReadResourceDirectoryRequest(uri=uri, cursor=cursor)
        return await self.request(request, **options)
