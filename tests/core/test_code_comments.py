"""A `# comment` line inside a fenced code block is code, not a heading. A new operator saw
sections named after YAML and shell comments ("Required - pin to the full commit SHA…"),
and answers that ended at "Example buildspec excerpt:" because the code had been cut off
into sections of its own."""

from __future__ import annotations

from docassist.core.documents import parse_document

PAGE = """# Actions best practices

## Pin all actions to a commit SHA

Every action reference must use a full-length commit SHA:

```yaml
# Not secure - can change unexpectedly
- uses: actions/checkout@v4
# Required - pin to the full commit SHA
- uses: actions/checkout@692973e3d937129bcbf40652eb9f2f61becf3332 # v4.1.7
```

## Signing on macOS

1. Create the key:

    ```bash
    # Configure GPG key for signing
    gpg --full-generate-key
    ```

````markdown
```
# a heading shown as an example, inside a longer fence
```
````

## Review
Ask a reviewer.
"""


def test_comments_in_code_blocks_stay_in_their_section() -> None:
    parsed = parse_document("actions.md", "actions", PAGE)
    assert [chunk.section for chunk in parsed.chunks] == [
        "Pin all actions to a commit SHA", "Signing on macOS", "Review"]
    pinning, signing, _ = (chunk.text for chunk in parsed.chunks)
    assert "# Required - pin to the full commit SHA\n- uses: actions/checkout@692973" in pinning
    assert "    # Configure GPG key for signing\n    gpg --full-generate-key" in signing
    assert "# a heading shown as an example, inside a longer fence" in signing


def test_a_heading_after_an_unclosed_fence_is_still_code() -> None:
    """An unclosed fence runs to the end of the page, as Markdown renders it."""
    parsed = parse_document("x.md", "x", "# Page\n\n## Setup\n\n```sh\n# install\nmake\n")
    assert [chunk.section for chunk in parsed.chunks] == ["Setup"]
