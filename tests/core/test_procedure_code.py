"""A step's code block stays a block after the step's line: joined into the line, YAML lost
its indentation and its fence was shown as text (a new operator's dev-container answer)."""

from __future__ import annotations

from pathlib import Path

from docassist.bot import layout
from docassist.core.answering import check_citations
from docassist.storage import Store
from tests.conftest import EngineFactory, ranked_engine_over
from tests.helpers import message

PAGE = """---
title: Setting up the build pipeline
---
# Setting up the build pipeline

## Create the pipeline file

Create `azure-pipelines.yml` in the repository root:

```yaml
steps:
  - task: Docker@2
    inputs:
      command: build
```

## Run the pipeline

Push your branch, then run `az pipelines run --name build`.

## Check the result

Open the run and check that every step passed.
"""


def test_a_steps_code_block_follows_its_line_whole(
        tmp_path: Path, make_engine: EngineFactory, store: Store) -> None:
    (tmp_path / "handbook").mkdir()
    (tmp_path / "handbook" / "pipeline.md").write_text(PAGE, encoding="utf-8")
    engine = ranked_engine_over(make_engine, store, tmp_path / "handbook")
    result = engine.handle(message("How do I set up the build pipeline?"))
    assert result is not None and result.status == "answered"
    blocks = layout.parse(result.answer)
    kinds = [block.kind for block in blocks]
    assert kinds[:4] == ["line", "step", "code", "step"], result.answer
    assert blocks[2].spans[0].text == (
        "steps:\n  - task: Docker@2\n    inputs:\n      command: build")
    assert "```" not in "".join(span.text for block in blocks if block.kind != "code"
                                for span in block.spans)


def test_tidying_a_dropped_citations_spaces_leaves_code_alone() -> None:
    kept = "DOC-A-0123456789-0001"
    answer = (f"Run it  [DOC-GONE-0123456789-0001] [{kept}]\n```yaml\na:\n  b:   1\n```\n"
              "Then   wait.")
    cleaned, cited, warnings = check_citations(answer, {kept})
    assert cleaned == f"Run it [{kept}]\n```yaml\na:\n  b:   1\n```\nThen wait."
    assert cited == [kept] and warnings == ["removed_citation:DOC-GONE-0123456789-0001"]
