"""``mcptrio install CLIENT TARGET``: the entry that starts TARGET, written into the client's
own configuration file (:mod:`.client_configs` says where).

The file is changed only where the entry goes: every other member, and every other server, is
kept as it was (in its order; the file is rewritten as indented JSON). Before the file is
changed it is copied to ``FILE.bak-YYYYMMDD-HHMMSS``, and the new text replaces it in one
rename, so that a client reading it never sees half a file. A file that is not JSON (a client
may allow comments; a hand edit may have broken it) is never rewritten: the command says where
it fails and stops. A server of the same name is replaced only with ``--force``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from .client_configs import client_config
from .errors import EXIT_OK, usage_error
from .server_entry import stdio_entry

__all__ = ["install"]


def install(args: argparse.Namespace) -> int:
    """Write (or with ``--dry-run`` print) the client's file with TARGET's entry in it."""
    client = client_config(args.client)
    name, entry = stdio_entry(args.target, args.name)
    if args.env:
        entry["env"] = {**entry.get("env", {}), **_environment(args.env)}
    entry = client.entry(entry)
    path = client.path.resolve()
    document = _read(path)
    servers = document.setdefault(client.servers_key, {})
    if not isinstance(servers, dict):
        raise usage_error(
            f'{path}: "{client.servers_key}" is not a JSON object; mcptrio install leaves the'
            " file as it is"
        )
    if servers.get(name) == entry:
        print(f"{client.title} already has {name!r} as written, in {path}: nothing changed")
        return EXIT_OK
    if name in servers and not args.force:
        raise usage_error(
            f"{path} already has a server named {name!r}: add --force to replace it,"
            " or --name to install under another name"
        )
    servers[name] = entry
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if args.dry_run:
        print(f"mcptrio install: would write {path} (nothing written)", file=sys.stderr, flush=True)
        sys.stdout.write(text)
        return EXIT_OK
    backup = _back_up(path) if path.exists() else None
    _replace(path, text)
    kept = f" (the previous file is {backup})" if backup else ""
    print(f"Installed {name!r} in {path}{kept}; restart {client.title} to load it")
    return EXIT_OK


def _environment(pairs: list[str]) -> dict[str, str]:
    environment = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not key or not equals:
            raise usage_error(f"--env {pair!r}: give KEY=VALUE")
        environment[key] = value
    return environment


def _read(path: Path) -> dict[str, Any]:
    """The client's file as a JSON object: empty when there is no file, or nothing in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise usage_error(f"cannot read {path}: {_reason(exc)}") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise usage_error(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg});"
            " mcptrio install does not overwrite it: fix it, or add the entry by hand"
            " (mcptrio config prints it)"
        ) from None
    if not isinstance(document, dict):
        raise usage_error(
            f"{path} holds a JSON {type(document).__name__}, not an object;"
            " mcptrio install does not overwrite it"
        )
    return document


def _back_up(path: Path) -> Path:
    """Copy ``path`` beside itself, as ``NAME.bak-YYYYMMDD-HHMMSS`` (``-2``, ``-3``... when
    that name is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    count = 1
    while backup.exists():
        count += 1
        backup = path.with_name(f"{path.name}.bak-{stamp}-{count}")
    try:
        shutil.copy2(path, backup)
    except OSError as exc:
        raise usage_error(f"cannot back up {path} as {backup}: {_reason(exc)}") from None
    return backup


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to a file beside ``path`` and rename it over ``path``, keeping its
    permission bits (``~/.claude.json`` is private to its user)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as written:
                written.write(text)
            if mode is not None:
                os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise usage_error(f"cannot write {path}: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
