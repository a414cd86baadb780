"""PDF, HTML and DOCX become the same heading-structured chunks as txt and md."""

from __future__ import annotations

from pathlib import Path

import docx
import pytest
from fpdf import FPDF

from docassist.core.extractive import LinkTitles
from docassist.sources.remote import readable
from docassist.storage import Store, index_paths
from docassist.storage.formats import read_document
from tests.cli_run import one_json, run

BM25_ONLY = {"DOCASSIST_EMBEDDER": "none", "DOCASSIST_RETRIEVER": "bm25"}


def make_pdf(path: Path) -> None:
    pdf = FPDF()
    pdf.set_title("Disaster recovery runbook")
    pdf.set_author("Ops Team")
    pdf.set_font("helvetica", size=12)
    for title, body in (("Failover", "Promote the standby replica and repoint DNS."),
                        ("Failback", "Resynchronise the old primary before switching back.")):
        pdf.add_page()
        pdf.start_section(title)
        pdf.multi_cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.multi_cell(0, 8, body, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    document = docx.Document()
    document.core_properties.title = "Laptop policy"
    document.core_properties.author = "IT"
    document.add_heading("Laptop policy", level=0)
    document.add_heading("Encryption", level=1)
    document.add_paragraph("Full-disk encryption must stay enabled at all times.")
    document.add_heading("Lost devices", level=1)
    document.add_paragraph("Report a lost laptop to the service desk within one hour.")
    document.save(str(path))


HTML = """<!doctype html><html lang="pl"><head><title>Polityka haseł</title>
<meta name="docassist:id" content="DOC-HASLA"><meta name="docassist:version" content="2">
<script>var tracking = "ignore me";</script></head>
<body><nav>Menu: Home | Docs</nav>
<h1>Polityka haseł</h1><p>Wstęp do polityki.</p>
<h2>Zmiana hasła</h2><p>Hasło zmieniaj co 90 dni w portalu <b>SSO</b>.</p>
<ul><li>minimum 14 znaków</li><li>bez imion</li></ul>
<h2>Reset hasła</h2><p>Zadzwoń do service desku.</p>
<div class="footer">© Acme</div></body></html>"""


def test_html_headings_metadata_and_no_scripts(tmp_path: Path) -> None:
    path = tmp_path / "hasla.html"
    path.write_text(HTML, encoding="utf-8")
    text, _ = read_document(path)
    assert "id: DOC-HASLA" in text and "language: pl" in text
    assert "## Zmiana hasła" in text and "minimum 14 znaków" in text
    assert "tracking" not in text and "Menu:" not in text and "Acme" not in text


def test_every_format_is_indexed_with_sections(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "dr-runbook.pdf")
    make_docx(docs / "laptop-policy.docx")
    (docs / "hasla.html").write_text(HTML, encoding="utf-8")
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [docs])
    assert sorted(report.indexed) == ["DOC-DR-RUNBOOK", "DOC-HASLA", "DOC-LAPTOP-POLICY"]
    sections: dict[str, list[str]] = {
        chunk.document_id: [] for chunk in store.current_chunks()}
    for chunk in store.current_chunks():
        sections[chunk.document_id].append(chunk.section)
    assert sections["DOC-DR-RUNBOOK"] == ["Failover", "Failback"]
    assert sections["DOC-LAPTOP-POLICY"] == ["Encryption", "Lost devices"]
    assert sections["DOC-HASLA"] == ["Polityka haseł", "Zmiana hasła", "Reset hasła"]
    runbook = store.document("DOC-DR-RUNBOOK")
    assert runbook and runbook.title == "Disaster recovery runbook" and runbook.owner == "Ops Team"
    assert store.document("DOC-HASLA").version == "2"  # type: ignore[union-attr]
    store.close()


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("broken.pdf", b"%PDF-1.4 garbage", "unreadable PDF"),
    ("broken.docx", b"PK\x03\x04 not a zip", "unreadable .docx file"),
])
def test_broken_binary_documents_are_skipped_with_a_note(tmp_path: Path, name: str, data: bytes,
                                                         reason: str) -> None:
    (tmp_path / name).write_bytes(data)
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [tmp_path / name])
    assert report.indexed == [] and reason in report.notes[0]
    store.close()


def malformed_pdf(text: str) -> bytes:
    """A one-page PDF pypdf reads only by repairing it: every xref offset is wrong (it warns
    "Ignoring wrong pointing object …") and /Count is given twice ("Multiple definitions in
    dictionary …")."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> >> >>",
               b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    body = b"%PDF-1.4\n" + b"".join(b"%d 0 obj\n%s\nendobj\n" % (number, value)
                                     for number, value in enumerate(objects, 1))
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"0000000003 00000 n \n" * len(objects)  # each object is elsewhere
    return body + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1, xref)


PYPDF_LINES = ("Ignoring wrong pointing object", "Multiple definitions in dictionary",
               "Object 1 0 found", "EOF marker not found")


def test_pypdf_repair_warnings_stay_off_the_terminal(tmp_path: Path) -> None:
    """pypdf's warnings about what it repaired are DEBUG lines (DOCASSIST_LOG_LEVEL=DEBUG);
    the repaired PDF is indexed, and one it cannot read is still a note."""
    docs, db = tmp_path / "docs", tmp_path / "d.db"
    docs.mkdir()
    (docs / "pelicans.pdf").write_bytes(malformed_pdf("Rotate the pelican keys every spring."))
    (docs / "garbage.pdf").write_bytes(b"%PDF-1.4\nnot a PDF at all\n")
    done = run("index", str(docs), db=db, **BM25_ONLY)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "indexed 1, unchanged 0, removed 0: DOC-PELICANS"
    [note] = [line for line in done.stderr.splitlines() if line.strip()]
    assert note.startswith(f"note: {docs / 'garbage.pdf'}: skipped: unreadable PDF (")
    assert not any(line in done.stderr for line in PYPDF_LINES)
    answer = one_json(run("ask", "How often are the pelican keys rotated?", "--json", db=db,
                          **BM25_ONLY).stdout)
    assert [source["document_id"] for source in answer["sources"]][:1] == ["DOC-PELICANS"]
    debug = run("index", str(docs), db=tmp_path / "debug.db", DOCASSIST_LOG_LEVEL="DEBUG",
                **BM25_ONLY)
    assert all(line in debug.stderr for line in PYPDF_LINES)  # routed, not lost


DEPLOY_PAGE = """---
title: Deploying a service
weight: 20
---
# Deploying a service

<%= partial "partials/review-banner" %>

## Before you deploy

Ask for a review in the team channel.
Read <%= link_to "the release runbook", "/runbooks/release.html" %> first.

<% if current_page.data.internal %>
Internal only.
<% end %>
"""


def test_a_templated_markdown_tree_is_indexed_as_markdown(tmp_path: Path) -> None:
    """GOV.UK Tech Docs Template sites keep their pages as `.html.md.erb`: Markdown with Ruby
    tags. They are read as Markdown, the tags gone (a link keeps its text), and named by the
    page they render; an ERB file that is not Markdown is still skipped, by name."""
    docs = tmp_path / "source"
    (docs / "documentation" / "guides").mkdir(parents=True)
    (docs / "documentation" / "guides" / "deploy.html.md.erb").write_text(
        DEPLOY_PAGE, encoding="utf-8")
    (docs / "index.html.md.erb").write_text("# Team handbook\n\nHow we work.\n",
                                            encoding="utf-8")
    (docs / "layout.html.erb").write_text("<html><%= yield %></html>", encoding="utf-8")
    store = Store(tmp_path / "x.db")
    report = index_paths(store, [docs])
    assert sorted(report.indexed) == ["DOC-DOCUMENTATION_GUIDES_DEPLOY", "DOC-INDEX"]
    assert any("layout.html.erb" in note and "unsupported format .erb" in note
               for note in report.notes)
    page = store.document("DOC-DOCUMENTATION_GUIDES_DEPLOY")
    assert page is not None and page.title == "Deploying a service"
    text = " ".join(chunk.text for chunk in store.current_chunks()
                    if chunk.document_id == page.document_id)
    assert "Read the release runbook first." in text
    assert "<%" not in text and "partial" not in text and "Internal only." in text
    sections = [chunk.section for chunk in store.current_chunks()
                if chunk.document_id == page.document_id]
    assert "Before you deploy" in sections
    # A link to the rendered page (`/documentation/guides/deploy.html`) finds its title.
    assert LinkTitles(store).title("/documentation/guides/deploy.html") == (
        "Deploying a service", None)
    assert readable("deploy.html.md.erb") and not readable("layout.html.erb")
    store.close()


SUPPORT_PAGE = """---
title: Support
---

# <%= current_page.data.title %>

## <%= partial "partials/banner" %>

## Helpdesk
For general queries call 0300 1234 888.

```bash
#
make support
```
"""


def test_a_templated_page_is_headed_by_its_own_title_and_no_heading_is_left_empty(
        tmp_path: Path) -> None:
    """Tech Docs Template pages head themselves `# <%= current_page.data.title %>`: that is
    the front matter's title, not an empty `#` that became a chunk of its own; a heading
    holding only a partial goes; a `#` line inside code stays."""
    (tmp_path / "support.html.md.erb").write_text(SUPPORT_PAGE, encoding="utf-8")
    store = Store(tmp_path / "x.db")
    index_paths(store, [tmp_path])
    chunks = [chunk for chunk in store.current_chunks() if chunk.document_id == "DOC-SUPPORT"]
    bodies = [chunk.text.split("\n", 1)[-1].strip() for chunk in chunks]
    assert all(body.strip("# \n") for body in bodies), bodies  # no chunk is only a `#`
    assert [chunk.section for chunk in chunks] == ["Helpdesk"]
    assert "0300 1234 888" in bodies[0] and "#\nmake support" in bodies[0]
    store.close()
