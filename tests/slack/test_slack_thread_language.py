"""Language per thread: a message that does not tell (an id, "ok", a button) keeps the
thread's language; a message clearly in the other language switches it, both ways."""

from __future__ import annotations

from typing import Any

from docassist.bot.slack.render import SHOW_SOURCES_ACTION
from tests.conftest import EngineFactory
from tests.slack.rig import CHANNEL, TEAM, SlackRig, channel_message, mention


def languages(rig: SlackRig) -> list[str]:
    return [turn["language"] for turn in rig.store.turns()]


def show_sources(rig: SlackRig, thread: str, action_ts: str) -> None:
    rig.interactive({"type": "block_actions", "team": {"id": TEAM}, "user": {"id": "U1"},
                     "container": {"type": "message", "channel_id": CHANNEL,
                                   "message_ts": "1.1", "thread_ts": thread},
                     "message": {"ts": "1.1", "thread_ts": thread},
                     "channel": {"id": CHANNEL}, "trigger_id": f"tr-{action_ts}",
                     "actions": [{"action_id": SHOW_SOURCES_ACTION,
                                  "action_ts": action_ts}]})


def test_polish_thread_keeps_polish_then_switches_to_english(rig: SlackRig) -> None:
    rig.event(mention("Jak odnowić certyfikat TLS?", "10.1"), "Ev1")
    for index, text in enumerate(("DOC-TLS", "ok"), start=2):
        rig.event(channel_message(text, f"10.{index}", thread_ts="10.1"), f"Ev{index}")
    show_sources(rig, "10.1", "10.5")
    assert languages(rig) == ["pl", "pl", "pl", "pl"]
    assert "(tura " in rig.api.posted()[-1]["text"]  # the button's reply is in Polish
    rig.event(channel_message("How do I restore the database from a backup?", "10.6",
                              thread_ts="10.1"), "Ev6")
    rig.event(channel_message("ok", "10.7", thread_ts="10.1"), "Ev7")
    show_sources(rig, "10.1", "10.8")
    assert languages(rig)[4:] == ["en", "en", "en"]
    assert "(turn " in rig.api.posted()[-1]["text"]  # and now in English


def test_english_thread_keeps_english_then_switches_to_polish(
        rig_factory: Any, make_engine: EngineFactory) -> None:
    rig = rig_factory(make_engine(default_language="pl"))  # a default that is not English
    rig.event(mention("How do I renew the TLS certificate?", "20.1"), "Ev1")
    rig.event(channel_message("DOC-TLS", "20.2", thread_ts="20.1"), "Ev2")
    rig.event(channel_message("ok", "20.3", thread_ts="20.1"), "Ev3")
    rig.event(channel_message("A jak odtworzyć bazę danych z kopii?", "20.4",
                              thread_ts="20.1"), "Ev4")
    rig.event(channel_message("ok", "20.5", thread_ts="20.1"), "Ev5")
    assert languages(rig) == ["en", "en", "en", "pl", "pl"]
