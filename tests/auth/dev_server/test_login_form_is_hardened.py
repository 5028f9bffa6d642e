"""The development authorization server's login form under attack: password guessing is
throttled per user name and per client, and the form's token is bound to the browser that
opened it and to the authorization request it was opened for (no login CSRF, no replay)."""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
from typing import Any

import httpx2
import pytest
import trio
from served_dev_server import dev_server

from mcptrio.auth.dev_server import LoginThrottle

IO_LIMIT = 20.0
CALLBACK = "http://127.0.0.1:1/callback"
USERS = {"ann": "right", "bob": "right"}
_HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)">')


def challenge() -> str:
    digest = hashlib.sha256(secrets.token_urlsafe(48).encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


async def registered(client: httpx2.AsyncClient) -> str:
    answer = await client.post(
        "/register", json={"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "none"}
    )
    return str(answer.json()["client_id"])


async def open_form(client: httpx2.AsyncClient, client_id: str, **extra: str) -> dict[str, str]:
    """The hidden fields of the login form ``client`` (a browser) is shown, as it would post
    them back."""
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": challenge(),
        "code_challenge_method": "S256",
        "state": "s",
        **extra,
    }
    page = await client.get("/authorize", params=params)
    assert page.status_code == 200 and "<form" in page.text
    return {name: html.unescape(value) for name, value in _HIDDEN.findall(page.text)}


async def log_in(
    client: httpx2.AsyncClient, form: dict[str, str], name: str, password: str
) -> httpx2.Response:
    return await client.post("/authorize", data={**form, "username": name, "password": password})


def approved(answer: httpx2.Response) -> bool:
    return answer.status_code == 302 and "code=" in answer.headers["location"]


async def test_guessing_one_users_password_is_throttled() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(auto_approve=False, users=USERS) as (_, browser):
            client_id = await registered(browser)
            for _ in range(5):
                wrong = await log_in(browser, await open_form(browser, client_id), "ann", "x")
                assert wrong.status_code == 401
            right = await log_in(browser, await open_form(browser, client_id), "ann", "right")
            other = await log_in(browser, await open_form(browser, client_id), "bob", "right")
    assert right.status_code == 429 and not approved(right)
    assert "Too many failed logins" in right.text
    assert int(right.headers["retry-after"]) > 0
    assert approved(other)  # another user of the same client is not locked out by ann's name


async def test_guessing_many_names_from_one_client_is_throttled() -> None:
    throttle = LoginThrottle(per_name=100, per_client=8)
    with trio.fail_after(IO_LIMIT):
        async with dev_server(auto_approve=False, users=USERS, login_throttle=throttle) as (
            _,
            browser,
        ):
            client_id = await registered(browser)
            for n in range(8):
                form = await open_form(browser, client_id)
                assert (await log_in(browser, form, f"guess{n}", "x")).status_code == 401
            right = await log_in(browser, await open_form(browser, client_id), "bob", "right")
    assert right.status_code == 429 and not approved(right)


def test_failures_age_out_of_the_window() -> None:
    throttle = LoginThrottle(per_name=2, per_client=10, window=60.0)
    for at in (0.0, 1.0):
        throttle.failed("ann", "10.0.0.1", now=at)
    assert throttle.wait("ann", "10.0.0.2", now=30.0) == pytest.approx(30.0)
    assert throttle.wait("bob", "10.0.0.1", now=30.0) == 0.0
    assert throttle.wait("ann", "10.0.0.1", now=60.5) == 0.0  # the first failure aged out
    throttle.succeeded("ann")
    assert throttle.wait("ann", "10.0.0.1", now=1.5) == 0.0


def test_throttle_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="per_name"):
        LoginThrottle(per_name=0)
    with pytest.raises(ValueError, match="window"):
        LoginThrottle(window=0)


async def test_a_form_posted_from_another_browser_logs_nobody_in() -> None:
    """Login CSRF: the attacker opens a form, then makes the victim's browser post it with the
    attacker's name and password."""
    with trio.fail_after(IO_LIMIT):
        async with dev_server(auto_approve=False, users=USERS) as (auth, attacker):
            client_id = await registered(attacker)
            form = await open_form(attacker, client_id)
            async with httpx2.AsyncClient(base_url=auth.issuer) as victim:
                forged = await log_in(victim, form, "ann", "right")
    assert forged.status_code == 403 and not approved(forged)
    assert "<form" in forged.text  # the victim is shown a fresh form, not logged in


async def test_a_form_token_is_for_its_own_authorization_request() -> None:
    with trio.fail_after(IO_LIMIT):
        async with dev_server(auto_approve=False, users=USERS) as (_, browser):
            client_id = await registered(browser)
            form = await open_form(browser, client_id)
            swapped: dict[str, Any] = {**form, "code_challenge": challenge()}
            refused = await log_in(browser, swapped, "ann", "right")
            form = await open_form(browser, client_id)
            used = await log_in(browser, form, "ann", "right")
            again = await log_in(browser, form, "ann", "right")
    assert refused.status_code == 403 and not approved(refused)
    assert approved(used)
    assert again.status_code == 403 and not approved(again)  # a token is good for one post
