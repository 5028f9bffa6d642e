"""A browser for ``mcptrio ... --login`` in tests: ``BROWSER="python browser_stand_in.py %s"``.

It does what a user does in the browser Python's ``webbrowser`` would open: it loads the
authorization URL, fills in the development authorization server's login form with
``MCPTRIO_TEST_LOGIN`` (``name:password``) when it shows one, and follows the redirect back to
mcptrio's loopback listener. Each URL it is sent to is appended to ``MCPTRIO_TEST_BROWSER_LOG``.
"""

from __future__ import annotations

import html
import os
import re
import sys

import httpx2


def main(url: str) -> int:
    with open(os.environ["MCPTRIO_TEST_BROWSER_LOG"], "a", encoding="utf-8") as log:
        log.write(url + "\n")
    with httpx2.Client(follow_redirects=False, timeout=10) as browser:
        answer = browser.get(url)
        if answer.status_code == 200:
            fields = dict(re.findall(r'name="(\w+)" value="([^"]*)"', answer.text))
            name, _, password = os.environ["MCPTRIO_TEST_LOGIN"].partition(":")
            form = {key: html.unescape(value) for key, value in fields.items()}
            form.update(username=name, password=password)
            answer = browser.post(url.split("?", 1)[0], data=form)
        if answer.status_code != 302:
            print(
                f"the login did not redirect: HTTP {answer.status_code}: {answer.text[:300]}",
                file=sys.stderr,
            )
            return 1
        back = browser.get(answer.headers["location"])
    return 0 if back.status_code == 200 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
