"""A set-up question starts at the beginning of the long section that answers it: a new
operator asking how to set up commit signing on a Mac was given its last part ("Note the
Key ID…"), and on Windows a procedure that began at "Test the key is visible"."""

from __future__ import annotations

import re
from pathlib import Path

from docassist.core import passages, procedure
from docassist.core.extractive import ExtractiveAnswerer, compose_procedure
from docassist.core.ports import SearchHit
from docassist.storage import Store, index_paths

STEPS = "\n".join(f"{n}. Step {n} of the Mac set-up: run `tool-{n} --configure` and check that "
                  f"the output of tool {n} says ready before going on to the next one."
                  for n in range(1, 31))
PAGE = f"# Commit signing\n\n## macOS\n\n{STEPS}\n\n## Troubleshooting\n\nAsk in #help.\n"


def _hits(store: Store, tmp_path: Path, *retrieved: int) -> list[SearchHit]:
    (tmp_path / "signing.md").write_text(PAGE)
    index_paths(store, [tmp_path])
    document = store.document("DOC-SIGNING")
    assert document is not None
    chunks = [chunk for n in range(1, document.chunk_count + 1)
              if (chunk := store.chunk(f"DOC-SIGNING-{document.content_sha256[:10]}-{n:04d}"))]
    assert [chunk.section for chunk in chunks][:2] == ["macOS (1/5)", "macOS (2/5)"]
    return [SearchHit(chunk, document, 0.9 if n in retrieved else 0.0)
            for n, chunk in enumerate(chunks, 1)]


def _sections(answer: str, store: Store) -> list[str]:
    return [chunk.section for found in re.findall(r"\[([^\]]+-\d{4})\]", answer)
            if (chunk := store.chunk(found)) is not None]


def test_a_set_up_question_starts_at_the_sections_first_part(store: Store,
                                                             tmp_path: Path) -> None:
    hits = _hits(store, tmp_path, 5)
    answerer = ExtractiveAnswerer(catalog=store)
    answer = answerer.compose("on a mac, how do i set up the tools?", hits, "en")
    assert _sections(answer, store)[0] == "macOS (1/5)"
    assert "Step 1 of the Mac set-up" in answer


def test_a_set_up_procedure_starts_at_the_sections_first_part(store: Store,
                                                               tmp_path: Path) -> None:
    """Retrieval returned the section's last two parts: the steps begin at its first."""
    hits = _hits(store, tmp_path, 4, 5)
    answer = ExtractiveAnswerer(catalog=store).compose(
        "on a mac, how do i set up the tools?", hits, "en")
    assert _sections(answer, store) == [f"macOS ({n}/5)" for n in range(1, 6)]


def test_a_question_about_a_later_step_keeps_its_part(store: Store, tmp_path: Path) -> None:
    hits = _hits(store, tmp_path, 5)
    answer = ExtractiveAnswerer(catalog=store).compose(
        "what does tool 29 need to say before the next one?", hits, "en")
    assert _sections(answer, store)[0] == "macOS (5/5)"


def test_what_asks_to_set_up() -> None:
    assert procedure.asks_to_set_up("jak skonfigurować podpisywanie commitów na windowsie?")
    assert procedure.asks_to_set_up("how do I install the agent?")
    assert not procedure.asks_to_set_up("how do I test that signing works?")


def test_a_how_to_after_its_context_is_a_how_to() -> None:
    assert procedure.is_how_to("on a mac, how do i set up signing?")
    assert procedure.is_how_to("na windowsie - jak skonfigurować podpisywanie?")
    assert not procedure.is_how_to("on a mac, is signing required?")


def test_each_part_of_a_procedure_starts_where_the_part_before_ended(store: Store,
                                                                     tmp_path: Path) -> None:
    """A long section's next part repeats the last lines of the part before it (the chunk
    overlap): a step shown whole was said again at the start of the next one."""
    intro = "Get the build agent on your machine. " + "It runs the checks locally. " * 9
    download = "Download the agent from the releases page and unpack it into your home folder."
    script = "\n".join(f"agent configure --option-{n} value-{n}   # setting {n} of the agent"
                       for n in range(13))
    body = f"{intro}\n\n{download}\n\n```sh\n{script}\n```\n\n" + "Then restart. " * 40
    (tmp_path / "agent.md").write_text(f"# Build agent\n\n## Install\n\n{body}\n")
    index_paths(store, [tmp_path])
    document = store.document("DOC-AGENT")
    assert document is not None
    parts = [chunk for n in range(1, document.chunk_count + 1)
             if (chunk := store.chunk(f"DOC-AGENT-{document.content_sha256[:10]}-{n:04d}"))]
    assert [chunk.section for chunk in parts] == ["Install (1/3)", "Install (2/3)",
                                                  "Install (3/3)"]
    assert download in parts[0].text and download in parts[1].text  # the overlap
    steps = [SearchHit(chunk, document, 0.9) for chunk in parts]
    answer = compose_procedure(steps, "en")
    assert answer.count("Download the agent") == 1, answer
    assert "agent configure --option-12" in answer


def test_only_the_overlap_is_taken_off() -> None:
    before = "Install the agent.\n\n1. Run `agent --init` and wait for the ready line."
    after = "1. Run `agent --init` and wait for the ready line.\n2. Start it."
    assert passages.without_repeat(before, after) == "2. Start it."
    assert passages.without_repeat("Run it:", "Run it: now") == "Run it: now"  # by chance
    assert passages.without_repeat("abc", "Different text entirely here.") == (
        "Different text entirely here.")
