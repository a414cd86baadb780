"""Fenced code is read one way by the indexer, the passage renderer and the answer's tidying
(core/fences.py). Before, four readers disagreed: a "```python" line inside an open block
closed it for the renderer but not for the indexer, and a line of inline code ("```make
test```") opened a block that swallowed the headings after it."""

from __future__ import annotations

from docassist.core import passages
from docassist.core.documents import parse_document, split_by_size
from docassist.core.fences import fence_after, outside_code

NESTED = """````md
Write the example like this:

```python
print("hi")

print("bye")
```
<!-- the example's own comment -->
````"""


def test_only_the_same_marker_without_an_info_string_closes_a_block() -> None:
    assert fence_after("```python", "") == "```"
    assert fence_after("```python", "```") == "```"
    assert fence_after("~~~", "```") == "```"
    assert fence_after("```", "````") == "````"
    assert fence_after("````", "````") == ""
    assert fence_after("  ```  ", "```") == ""


def test_a_line_of_inline_code_is_not_a_fence() -> None:
    assert fence_after("```make test```", "") == ""
    assert fence_after("~~~ shown as `code` ~~~", "") == "~~~"


def test_a_heading_after_a_line_of_inline_code_is_a_section() -> None:
    page = "# Build\n\nRun it:\n\n```make test```\n\n## Deploy\n\nPush the tag.\n"
    sections = [chunk.section for chunk in parse_document("build.md", "build", page).chunks]
    assert sections == ["Build", "Deploy"]


def test_a_nested_example_is_one_code_block_in_a_passage() -> None:
    assert passages.render(f"See:\n{NESTED}\nDone.").lines == ["See:", NESTED, "Done."]


def test_comments_inside_a_nested_example_are_code() -> None:
    changed = outside_code(f"<!-- a -->\n{NESTED}\n<!-- b -->\n", lambda text: text.upper())
    assert changed == f"<!-- A -->\n{NESTED}\n<!-- B -->\n"


def test_a_long_section_is_not_cut_at_a_blank_line_inside_a_nested_example() -> None:
    text = "\n\n".join(["Intro paragraph. " * 3, NESTED, "Closing paragraph. " * 3])
    windows = split_by_size(text, max_chars=160, target_chars=130, overlap_chars=0)
    assert any(NESTED in window for window in windows)
