"""A long page whose sections all match a question: every retrieved chunk is of that page, and
the answer's sources must still fit in a tool result (MAX_RESULT_CHARS). Seen on the Rust
Forge's Leadership Council page: "na ile czasu wybiera się reprezentanta teamu do Leadership
Council?" got "something went wrong (result_too_large)" instead of its answer."""

from __future__ import annotations

import re
from pathlib import Path

from docassist.core.limits import MAX_SOURCES
from tests.cli_run import one_json, run

TOPICS = ("term", "selection", "alternates", "removal", "limits", "expectations", "meetings",
          "voting", "conflicts", "absence", "handover", "onboarding", "budget", "travel",
          "reporting", "records", "audits", "ethics", "recusal", "escalation", "quorum",
          "minutes", "renewal", "successors")


def _long_page(root: Path) -> None:
    sections = ["# Leadership Council handbook for representatives of top-level teams\n"]
    for number, topic in enumerate(TOPICS, start=1):
        sentence = (f"A council representative of a top-level team serves a term of two years "
                    f"and follows the {topic} rules set by the Leadership Council.")
        sections.append(f"## Council representatives: {topic}\n\n{' '.join([sentence] * 4)} "
                        f"Rule {number} applies to every representative term.\n")
    page = root / "governance" / "leadership-council-and-teams" / "representatives-handbook.md"
    page.parent.mkdir(parents=True)
    page.write_text("\n".join(sections), encoding="utf-8")


def test_a_page_with_more_matching_sections_than_sources_is_answered(tmp_path: Path) -> None:
    corpus, db = tmp_path / "corpus", tmp_path / "long.db"
    _long_page(corpus)
    assert run("index", str(corpus), "--json", db=db).returncode == 0
    done = run("ask", "how long is the term of a council representative of a top-level team?",
               "--json", db=db, DOCASSIST_MODEL="rules")
    assert done.returncode == 0, done.stderr
    reply = one_json(done.stdout)
    assert reply["tool"]["status"] == "tool_completed", reply["tool"]
    assert reply["status"] == "answered"
    assert 0 < len(reply["sources"]) <= MAX_SOURCES
    listed = {source["chunk_id"] for source in reply["sources"]}
    cited = set(re.findall(r"\[(DOC-[^\]]+)\]", reply["answer"]))
    assert cited and cited <= listed  # every citation still resolves to a listed source
