"""Which operations of a document a server exposes.

An :class:`OperationFilter` keeps an operation when it passes every test that is set (an empty
one passes all): its ``operationId`` (or, without one, its tool name) matches one of
``include`` and none of ``exclude`` (shell globs, ``fnmatch``: ``get_*``, ``*pet*``); it has one
of ``tags``; its method is one of ``methods``; its path matches one of ``paths`` (globs:
``/pets/*``). ``deprecated`` operations are kept unless ``keep_deprecated`` is false.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from .operations import Operation

__all__ = ["OperationFilter"]


@dataclass(frozen=True, kw_only=True)
class OperationFilter:
    """The operations to expose (see the module docstring)."""

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    tags: Sequence[str] = ()
    methods: Sequence[str] = ()
    paths: Sequence[str] = ()
    keep_deprecated: bool = True

    def keeps(self, operation: Operation, name: str) -> bool:
        """Whether ``operation`` (to be called ``name``) is exposed."""
        label = operation.operation_id or name
        if self.include and not any(fnmatchcase(label, glob) for glob in self.include):
            return False
        if any(fnmatchcase(label, glob) for glob in self.exclude):
            return False
        if self.tags and not set(self.tags) & set(operation.tags):
            return False
        if self.methods and operation.method not in {m.upper() for m in self.methods}:
            return False
        if self.paths and not any(fnmatchcase(operation.path, glob) for glob in self.paths):
            return False
        return self.keep_deprecated or not operation.deprecated
