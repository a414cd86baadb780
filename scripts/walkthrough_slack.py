"""The walkthrough's Slack step (scripts/walkthrough): the fresh clone's `docassist serve`
against a fake Slack Web API on 127.0.0.1, sent one signed mention as Slack would; the
answer must come back in the mention's thread. Run with the suite's venv (the fakes are the
test kit's, which scripts/test installs): `python scripts/walkthrough_slack.py CLONE_DOCASSIST
QUESTION EXPECTED_ID`."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Final

import httpx

from docassist_testkit.fakes.loopback import free_port, wait_healthy, wait_until
from docassist_testkit.fakes.slack_api import FakeSlackApi, post_signed_mention

SECRET: Final = "walkthrough-signing-secret"
ANSWER_SECONDS: Final = 120.0
"""How long the first answer may take (the turn processes load the embedder first)."""


def mention(port: int, question: str) -> httpx.Response:
    return post_signed_mention(port, SECRET, question, "EvWalkthrough", "100.1")


def main(docassist: str, question: str, expected: str) -> int:
    api = FakeSlackApi().start()
    port = free_port()
    env = {**os.environ, "SLACK_BOT_TOKEN": "xoxb-walkthrough",
           "SLACK_SIGNING_SECRET": SECRET, "DOCASSIST_SLACK_API_URL": api.url}
    server = subprocess.Popen([docassist, "serve", "--port", str(port)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    try:
        wait_healthy(server, port, lambda: "serve did not start")
        assert mention(port, question).status_code == 200
        assert wait_until(api.posted, ANSWER_SECONDS), "no answer was posted"
        [reply] = api.posted()
        # The answer cites with a marker; its sources block names the chunk id.
        assert reply["thread_ts"] == "100.1" and expected in str(reply["blocks"]), reply
        print(f"slack: answered in the thread, citing {expected}")
        return 0
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=30)
        api.stop()
        noise = "token` will be unused"
        assert noise not in stderr.decode(), "serve printed Bolt's token warning"


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
