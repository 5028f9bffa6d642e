"""A published skills folder that someone with write access turns hostile after publishing: a
file replaced by a FIFO (whose opening would block a worker thread for good), a file that is for
a while a link out of the folder (the skill is withdrawn, and comes back when it is fine)."""

from __future__ import annotations

import os
import threading
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest
import trio

import mcptrio
from mcptrio.client import ClientIdentity
from mcptrio.client.skills import declare_skills
from mcptrio.protocol.errors import InvalidParams, ResourceNotFound
from mcptrio.server.skill_files import MAX_STAMPED_ENTRIES, disk_stamps, read_file, scan_skill
from mcptrio.testing import open_test_client

SKILL_MD = "---\nname: pdf\ndescription: PDF forms\n---\nSee references/FORMS.md.\n"
FORMS_URI = "skill://pdf/references/FORMS.md"
SKILL_URI = "skill://pdf/SKILL.md"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    (root / "pdf" / "references").mkdir(parents=True)
    (root / "pdf" / "SKILL.md").write_text(SKILL_MD)
    (root / "pdf" / "references" / "FORMS.md").write_text("# Forms\n")
    return root


def client_of(server: mcptrio.Server) -> AbstractAsyncContextManager[mcptrio.Client]:
    return open_test_client(server, identity=ClientIdentity(capabilities=declare_skills()))


async def unblock_after(fifo: Path, seconds: float, unblocked: list[bool]) -> None:
    """The watchdog of a test that today's code would hang: after ``seconds`` of real time, open
    ``fifo`` for writing (and close it), which lets a reader blocked opening it go on."""
    await trio.sleep(seconds)
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no reader is waiting on it
        return
    os.close(fd)
    unblocked.append(True)


async def test_a_file_replaced_by_a_fifo_is_not_served_and_blocks_no_thread(
    folder: Path,
) -> None:
    server = mcptrio.Server("skills")
    server.add_skills(folder)
    forms = folder / "pdf" / "references" / "FORMS.md"
    forms.unlink()
    os.mkfifo(forms)
    unblocked: list[bool] = []
    with trio.fail_after(20):
        async with client_of(server) as client, trio.open_nursery() as nursery:
            nursery.start_soon(unblock_after, forms, 3, unblocked)
            with pytest.raises(ResourceNotFound):
                await client.read_resource(FORMS_URI)
            nursery.cancel_scope.cancel()
        assert trio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
    assert not unblocked, "the read waited in a worker thread for a writer to open the FIFO"


def test_reading_a_fifo_or_a_directory_is_refused_without_blocking(folder: Path) -> None:
    fifo = folder / "pdf" / "pipe.md"
    os.mkfifo(fifo)
    unblocked: list[bool] = []
    watchdog = threading.Timer(3, trio.run, (unblock_after, fifo, 0, unblocked))
    watchdog.start()
    try:
        with pytest.raises(OSError, match="not a regular file"):
            read_file(fifo, folder)
    finally:
        watchdog.cancel()
    assert not unblocked, "read_file waited for a writer to open the FIFO"
    with pytest.raises(OSError, match="not a regular file"):
        read_file(folder / "pdf", folder)
    assert read_file(folder / "pdf" / "SKILL.md", folder) == SKILL_MD.encode()


async def test_a_skill_withdrawn_by_a_link_out_comes_back_when_the_file_is_fine(
    folder: Path,
) -> None:
    secret = folder.parent / "secret.txt"
    secret.write_text("# Forms\n")
    server = mcptrio.Server("skills")
    server.add_skills(folder)
    forms = folder / "pdf" / "references" / "FORMS.md"
    with trio.fail_after(10):
        async with client_of(server) as client:
            forms.unlink()
            os.symlink(secret, forms)
            with pytest.raises(ResourceNotFound):
                await client.read_resource(FORMS_URI)
            with pytest.raises(InvalidParams, match="No skill is served"):
                await client.get_skill(SKILL_URI)
            assert [s.uri async for s in client.iter_skills()] == []
            forms.unlink()
            forms.write_text("# Forms, restored\n")
            listed = [s.uri async for s in client.iter_skills()]
            got = await client.get_skill(SKILL_URI)
            text = await client.read_skill_file(got, "references/FORMS.md")
    assert listed == [SKILL_URI]
    assert text.text == "# Forms, restored\n"


async def test_a_withdrawn_skill_is_read_again_only_when_something_in_it_changed(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = mcptrio.Server("skills")
    server.add_skills(folder)
    scans: list[str] = []

    def counted(skill_path: str, directory: Path, root: Path) -> Any:
        scans.append(skill_path)
        return scan_skill(skill_path, directory, root)

    monkeypatch.setattr("mcptrio.server.skills.scan_skill", counted)
    manifest = folder / "pdf" / "SKILL.md"
    with trio.fail_after(10):
        async with client_of(server) as client:
            manifest.write_text("no frontmatter now\n")
            for _ in range(3):
                with pytest.raises(InvalidParams):
                    await client.get_skill(SKILL_URI)
            assert scans == ["pdf"]
            manifest.write_text(SKILL_MD)
            os.utime(manifest, ns=(1, 1))  # a new stamp even on a coarse clock
            got = await client.get_skill(SKILL_URI)
    assert got.name == "pdf"
    assert scans == ["pdf", "pdf"]


async def test_reload_forgets_a_withdrawn_skill_whose_folder_is_gone(folder: Path) -> None:
    server = mcptrio.Server("skills")
    skills = server.add_skills(folder)
    (folder / "other").mkdir()
    (folder / "other" / "SKILL.md").write_text("---\nname: other\ndescription: o\n---\n")
    await skills.reload()
    (folder / "pdf" / "SKILL.md").write_text("no frontmatter now\n")
    with trio.fail_after(10):
        async with client_of(server) as client:
            with pytest.raises(InvalidParams):
                await client.get_skill(SKILL_URI)
            for path in sorted((folder / "pdf").rglob("*"), reverse=True):
                path.rmdir() if path.is_dir() else path.unlink()
            (folder / "pdf").rmdir()
            await skills.reload()
            (folder / "pdf" / "references").mkdir(parents=True)
            (folder / "pdf" / "SKILL.md").write_text(SKILL_MD)
            listed = [s.uri async for s in client.iter_skills()]
    # Not published again until a reload finds it: reload decides the set of skills.
    assert listed == ["skill://other/SKILL.md"]


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "skills"
    (root / "a").mkdir(parents=True)
    (root / "a" / "b.md").write_text("inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "b.md").write_text("secret")
    resolve = os.path.realpath

    def resolved_then_swapped(path: Any) -> str:
        # The path is checked as it is now; a moment later its folder is a link out.
        resolved = resolve(path)
        (root / "a" / "b.md").unlink()
        (root / "a").rmdir()
        (root / "a").symlink_to(outside)
        return resolved

    monkeypatch.setattr(os.path, "realpath", resolved_then_swapped)
    with pytest.raises(OSError):
        read_file(root / "a" / "b.md", Path(resolve(root)))


def test_the_check_of_a_withdrawn_skill_stamps_a_bounded_number_of_entries(
    tmp_path: Path,
) -> None:
    # A skill withdrawn for holding too many files is checked on every listing: the check
    # must not walk a tree of any size (a node_modules folder, say).
    folder = tmp_path / "huge"
    for part in range(4):
        (folder / f"part{part}").mkdir(parents=True)
        for n in range(MAX_STAMPED_ENTRIES // 2):
            (folder / f"part{part}" / f"f{n}.md").touch()
    stamps = disk_stamps(folder)
    assert len(stamps) <= MAX_STAMPED_ENTRIES + 1
    assert disk_stamps(folder) == stamps
