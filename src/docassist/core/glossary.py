"""A Polish question glossed into English words, for the reader (reader.py), whose model
reads English only: "ile dni urlopu mi przysługuje?" → "how many day leave me entitled ?";
and an English question glossed into Polish, to search Polish pages with (rerank.py).

Word by word, in the question's order: a word the glossary holds becomes its first English
word; any other word (a name, a command, an English term typed in a Polish sentence) stays
as written. The result is no sentence, but the reader's model was trained on search queries,
which are rarely sentences either.

The glossaries (GLOSSARY_FILES: a Polish word form, a tab, one to three English words) were
written for this purpose from the writers' own knowledge, without sight of any evaluation
question (docs/evaluation-method.md): one of workplace nouns, one of the words a question is
made of (question words, verbs, adjectives, numbers). A word is looked up by its folded form,
then by its stem, so an inflection the glossaries do not list still finds its lemma's words.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Final

from docassist.core.text import fold, stem

GLOSSARY_FILES: Final = (Path(__file__).with_name("glossary_pl_en.tsv"),
                         Path(__file__).with_name("glossary_pl_en_general.tsv"))
_TOKEN: Final = re.compile(r"[^\W_]+(?:[-./][^\W_]+)*|[^\w\s]", re.UNICODE)


class Glossary:
    """Polish word forms and stems → English words."""

    def __init__(self, pairs: list[tuple[str, tuple[str, ...]]]) -> None:
        self.forms: dict[str, tuple[str, ...]] = {}
        self.stems: dict[str, tuple[str, ...]] = {}
        # English word -> the first Polish form that glosses to it: the files list a word's
        # lemma before its inflections ("zgłosić" before "zgłoszę").
        self.polish: dict[str, str] = {}
        for polish, english in pairs:
            for table, key in ((self.forms, fold(polish)), (self.stems, stem(fold(polish)))):
                table[key] = tuple(dict.fromkeys((*table.get(key, ()), *english)))
            for word in english:
                self.polish.setdefault(word.casefold(), polish)

    @classmethod
    def load(cls, *paths: Path) -> Glossary:
        pairs = []
        for path in paths:
            for line in path.read_text(encoding="utf-8").splitlines():
                polish, _, english = line.partition("\t")
                words = tuple(word.strip() for word in english.split(",") if word.strip())
                if polish.strip() and words:
                    pairs.append((polish.strip(), words))
        return cls(pairs)

    def english(self, word: str) -> tuple[str, ...]:
        """The English words for one word (none when the glossary lacks it)."""
        folded = fold(word)
        return self.forms.get(folded) or self.stems.get(stem(folded), ())

    def gloss(self, text: str) -> str:
        """Each word's first English word, or the word as written when there is none."""
        return " ".join((self.english(token) or (token,))[0] for token in _TOKEN.findall(text))

    def gloss_into_polish(self, text: str) -> str:
        """The other way: each English word's Polish form, or the word as written."""
        return " ".join(self.polish.get(token.casefold(), token)
                        for token in _TOKEN.findall(text))


@cache
def default_glossary() -> Glossary:
    """The shipped glossaries, read once per process."""
    return Glossary.load(*GLOSSARY_FILES)
