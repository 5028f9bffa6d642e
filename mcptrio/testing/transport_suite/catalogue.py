"""The checks, listed: :data:`CHECKS`, and the cases they make with a transport
(:func:`suite_cases`, :func:`transport_suite_params` for pytest).

A case is one check against one transport in one era. It is run, skipped with the reason the
transport's record gives, or expected to fail (``xfail(strict=True)``) because of a known bug
the record names; a check that cannot apply and has no reason in the record is an error when
the cases are made, so that nothing is left out silently.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from ...protocol.revisions import Era
from . import checks_calls, checks_cancellation, checks_lifetime
from .subject import ERAS, TransportUnderTest
from .trial import Trial, open_trial

__all__ = ["CHECKS", "Check", "SuiteCase", "suite_cases", "transport_suite_params"]


@dataclass(frozen=True)
class Check:
    """One behaviour: ``run(trial)`` checks it. ``eras`` are the eras it applies to, with
    ``why_not_other_eras`` saying why not the others; ``needs`` names the
    :class:`~.subject.TransportUnderTest` field it needs set (a record without it must give a
    reason in ``lacks``)."""

    run: Callable[[Trial], Awaitable[None]]
    eras: tuple[Era, ...] = ERAS
    why_not_other_eras: str = ""
    needs: str | None = None

    @property
    def name(self) -> str:
        return self.run.__name__

    @property
    def doc(self) -> str:
        return " ".join((self.run.__doc__ or "").split())


_ONLY_HANDSHAKE = (
    "in the stateless era the server asks the client through an input-required result and "
    "waits on no request of its own that it could give up on"
)

#: Every check, in the order they run.
CHECKS: tuple[Check, ...] = (
    Check(checks_calls.concurrent_calls_get_their_own_answers),
    Check(checks_calls.notifications_arrive_in_order_before_the_result),
    Check(checks_calls.slow_reader_gets_every_notification_then_the_answer),
    Check(checks_calls.large_messages_arrive_intact),
    Check(checks_calls.oversized_request_is_refused, needs="max_frame_size"),
    Check(checks_calls.oversized_answer_fails_its_call, needs="max_frame_size"),
    Check(checks_calls.server_requests_reach_the_client_and_come_back),
    Check(checks_cancellation.client_cancel_interrupts_the_handler),
    Check(checks_cancellation.client_timeout_raises_and_interrupts_the_handler),
    Check(
        checks_cancellation.server_timeout_interrupts_the_client_handler,
        eras=("handshake",),
        why_not_other_eras=_ONLY_HANDSHAKE,
    ),
    Check(checks_lifetime.stalled_peer_holds_up_no_other_session),
    Check(checks_lifetime.closing_the_client_ends_its_session),
    Check(checks_lifetime.half_close_ends_the_session, needs="half_close"),
    Check(checks_lifetime.server_going_away_fails_pending_calls),
)

_NAMES = {check.name for check in CHECKS}


@dataclass(frozen=True)
class SuiteCase:
    """One check against one transport in one era; ``skip`` or ``bug`` say why it is not
    simply run (``None``: it is)."""

    transport: TransportUnderTest
    check: Check
    era: Era
    skip: str | None = None
    bug: str | None = None

    @property
    def id(self) -> str:
        return f"{self.transport.name}-{self.check.name}-{self.era}"

    async def run(self) -> None:
        """Run the check, under the transport's deadline."""
        if self.skip is not None:
            raise RuntimeError(f"{self.id} does not apply: {self.skip}")
        deadline = self.transport.deadline
        trial: Trial | None = None
        try:
            with trio.fail_after(deadline):
                async with open_trial(self.transport, self.era) as trial:
                    await self.check.run(trial)
        except trio.TooSlowError:
            doing = "serving the server" if trial is None else trial.doing
            raise AssertionError(
                f"{self.id} did not finish within {deadline} s: it was stuck {doing}"
            ) from None
        except BaseExceptionGroup as group:
            # What failed, as itself: the nurseries of a check and of its clients are strict.
            only = _only_error(group)
            if only is None:
                raise
            raise only from None


def suite_cases(*transports: TransportUnderTest) -> list[SuiteCase]:
    """Every case of every check against ``transports``, in both eras; ``ValueError`` for a
    record whose ``lacks`` or ``known_bugs`` names no check or era, or that lacks something a
    check needs without saying why."""
    cases: list[SuiteCase] = []
    for transport in transports:
        _check_keys(transport)
        for check in CHECKS:
            for era in ERAS:
                cases.append(_case(transport, check, era))
    return cases


def transport_suite_params(*transports: TransportUnderTest) -> list[Any]:
    """The cases of :func:`suite_cases` as ``pytest.param`` values, with their ids and marks
    (``skip`` with the record's reason, ``xfail(strict=True)`` for a known bug)::

        @pytest.mark.parametrize("case", transport_suite_params(MY_TRANSPORT))
        async def test_my_transport(case: SuiteCase) -> None:
            await case.run()
    """
    import pytest  # Only a test run needs it: mcptrio itself does not depend on pytest.

    params = []
    for case in suite_cases(*transports):
        marks: list[Any] = []
        if case.skip is not None:
            marks.append(pytest.mark.skip(reason=case.skip))
        elif case.bug is not None:
            marks.append(pytest.mark.xfail(strict=True, reason=case.bug))
        params.append(pytest.param(case, id=case.id, marks=marks))
    return params


def _case(transport: TransportUnderTest, check: Check, era: Era) -> SuiteCase:
    # The most specific key wins: "check/era", then the check, then the era.
    keys = (f"{check.name}/{era}", check.name, era)
    lacking = next((key for key in keys if key in transport.lacks), None)
    if lacking is not None:
        reason = f"{transport.name} ({lacking}): {transport.lacks[lacking]}"
        return SuiteCase(transport, check, era, skip=reason)
    if era not in check.eras:
        return SuiteCase(transport, check, era, skip=f"{check.name}: {check.why_not_other_eras}")
    if check.needs is not None and getattr(transport, check.needs) is None:
        raise ValueError(
            f"TransportUnderTest {transport.name!r} has no {check.needs}, which"
            f" {check.name} needs: say why in lacks[{check.name!r}]"
        )
    bug = next((transport.known_bugs[key] for key in keys if key in transport.known_bugs), None)
    return SuiteCase(transport, check, era, bug=bug)


def _check_keys(transport: TransportUnderTest) -> None:
    known = _NAMES | set(ERAS) | {f"{name}/{era}" for name in _NAMES for era in ERAS}
    for field_name, keys in (("lacks", transport.lacks), ("known_bugs", transport.known_bugs)):
        unknown = sorted(set(keys) - known)
        if unknown:
            raise ValueError(
                f"TransportUnderTest {transport.name!r}: {field_name} names no check or era:"
                f" {unknown}"
            )


def _only_error(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The one error ``group`` holds, however deeply nested, or ``None`` if it holds more."""
    if len(group.exceptions) != 1:
        return None
    (only,) = group.exceptions
    return _only_error(only) if isinstance(only, BaseExceptionGroup) else only
