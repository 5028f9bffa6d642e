"""The task record the task store tests write first: a ``tools/call`` just started."""

from __future__ import annotations

from mcptrio.stores.task_store import TaskRecord, now_iso

__all__ = ["working_record"]


def working_record(
    task_id: str,
    owner: str = "session:a",
    ttl_ms: int | None = 60_000,
    poll_interval_ms: int | None = None,
) -> TaskRecord:
    """A ``tools/call`` task of ``owner``'s, ``working`` since now."""
    now = now_iso()
    return TaskRecord(
        task_id=task_id,
        owner=owner,
        method="tools/call",
        status="working",
        created_at=now,
        last_updated_at=now,
        ttl_ms=ttl_ms,
        poll_interval_ms=poll_interval_ms,
    )
