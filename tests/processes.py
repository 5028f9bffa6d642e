"""Stopping a child process a test started: politely, then for sure, never waiting forever."""

from __future__ import annotations

import subprocess

__all__ = ["stop_process"]


def stop_process(process: subprocess.Popen[bytes], timeout: float = 5) -> None:
    """SIGTERM ``process``, and SIGKILL it if it has not ended within ``timeout`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)
