"""What a page holds for its own tools stays out of answers: a new operator saw
`<!-- markdownlint-disable MD013 -->` in one and a stray "```sh" closing another (a chunk cut
just after a fence opened)."""

from __future__ import annotations

from docassist.core import passages

BODY = """Build the image in the pipeline.

<!-- markdownlint-disable MD013 -->

```html
<!-- an example's own comment stays -->
<p>ok</p>
```
<!-- markdownlint-enable MD013 -->
Push it to the registry <!-- TODO: name it --> when the tests pass.
<!-- a note
over two lines -->
Then deploy.
```sh"""


def test_comments_outside_code_and_empty_code_blocks_are_not_shown() -> None:
    assert passages.render(BODY).lines == [
        "Build the image in the pipeline.",
        "```html\n<!-- an example's own comment stays -->\n<p>ok</p>\n```",
        "Push it to the registry when the tests pass.",
        "Then deploy.",
    ]


def test_an_unclosed_fence_with_code_is_still_closed() -> None:
    assert passages.render("Run:\n```sh\nmake test").lines == ["Run:", "```sh\nmake test\n```"]


def test_entities_are_the_characters_they_name_except_in_code() -> None:
    """A new operator read "3&ndash;8 team members" in an answer."""
    assert passages.render("Invite 3&ndash;8 people &amp; book 3&ndash;4 hours; run "
                           "`grep '&amp;' log`.").lines == [
        "Invite 3–8 people & book 3–4 hours; run `grep '&amp;' log`."]


def test_task_list_boxes_are_boxes() -> None:
    assert passages.render("- [ ] Tests pass\n- [x] Code reviewed\n- plain item").lines == [
        "☐ Tests pass", "☑ Code reviewed", "• plain item"]


def test_a_code_block_inside_a_list_item_is_shown_flush_left() -> None:
    """Its closing fence kept four spaces in answers, so Markdown read it as code text and
    the block never ended; its own indentation (YAML) stays."""
    body = "1. Export the key:\n\n    ```bash\n    gpg --armor --export KEY\n    ```\n\n" \
           "2. Add it:\n\n    ```yaml\n    signing:\n      key: KEY\n    ```"
    assert passages.render(body).lines == [
        "1. Export the key:", "```bash\ngpg --armor --export KEY\n```",
        "2. Add it:", "```yaml\nsigning:\n  key: KEY\n```"]


def test_a_loose_lists_items_are_numbered_on_and_a_paragraph_starts_again() -> None:
    """Items apart by blank lines came out "1. … 1. …"."""
    body = "1. Open the portal.\n\n1. Fill in the form.\n\n```sh\nmake\n```\n\n1. Submit it.\n\n" \
           "Then, to check:\n\n1. Look at the status page."
    assert passages.render(body).lines == [
        "1. Open the portal.", "2. Fill in the form.", "```sh\nmake\n```", "3. Submit it.",
        "Then, to check:", "1. Look at the status page."]


def test_a_list_goes_on_from_its_first_items_number() -> None:
    """A runbook's step 1 ends with a code block and a paragraph, which end its list; step 2
    starts a list of its own, and came out "1. … 1. … 2." (set 40's HighRBDCloneSnapshotCount
    page)."""
    body = ("1. Clean up unused PVCs:\n```bash\noc delete pvc NAME\n```\n"
            "This triggers the CSI driver to clean up the clone.\n\n"
            "2. Implement lifecycle policies:\n    * Configure snapshot retention.\n"
            "3. Monitor the growth rate.")
    assert passages.render(body).lines == [
        "1. Clean up unused PVCs:", "```bash\noc delete pvc NAME\n```",
        "This triggers the CSI driver to clean up the clone.",
        "2. Implement lifecycle policies:", "    • Configure snapshot retention.",
        "3. Monitor the growth rate."]
    # A chunk that starts inside a list keeps the page's numbers.
    assert passages.render("4. Restart the pod.\n5. Check the logs.").lines == [
        "4. Restart the pod.", "5. Check the logs."]


def test_a_soft_wrapped_paragraph_is_one_line() -> None:
    """Pages wrapped at 80 columns came out a line per source line, cut mid-sentence."""
    body = ("Teams review their access every quarter and remove\nmembers who left.\n\n"
            "Ask the owner:  \nthen wait.\n\n- An item\n  that wraps.\n| a | b |")
    assert passages.render(body).lines == [
        "Teams review their access every quarter and remove members who left.",
        "Ask the owner:", "then wait.", "• An item that wraps.", "a — b"]
