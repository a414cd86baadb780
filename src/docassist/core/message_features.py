"""What the learned selector sees of a message: the same numbers at training and at run time.

Three groups, each cheap to compute on 2 cores:
    embedding  the shipped sentence embedder's vector of the message (multilingual USE,
               512 numbers): what it means, in Polish or English alike; the mean of the
               message as typed and folded, so a Polish message reads the same with or
               without its diacritics
    lexical    hashed word unigrams and bigrams, the first and last word, and character
               3–5-grams inside words, of the message folded to lower case without
               diacritics ("źródła" and "zrodla" are one word); counts damped (log) and the
               vector scaled to length 1
    state      the thread and the message's shape: history, sources to show, document ids,
               length, a reference word, what the follow-up resolver made of it; and how
               many subjects a reference may mean: the message's cosine to the last question
               and answer, the last two questions' cosine to each other, whether the answers
               cite two documents, and the thread's questions' words hashed beside the
               message's (at half their weight)

`scripts/train_selector.py` computes them through `features_of`, exactly as a turn does.
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Final

import numpy as np
import numpy.typing as npt

from docassist.core import intents
from docassist.core.documents import CITATION, document_of_chunk
from docassist.core.followup import find_marker
from docassist.core.ports import SelectionRequest

Vector = npt.NDArray[np.float32]
Vectors = npt.NDArray[np.float32]
Embed = Callable[[list[str]], Vectors]
"""Rows of the shipped embedder (length 1), one per text: a message's texts in one call,
which costs about half of embedding them one by one."""
Lookup = Callable[[str], Vector]
"""A text's vector among those already embedded for the message."""

HASH_DIMENSIONS: Final = 2**15
"""Buckets for the lexical features. 2^15 x 15 kinds stays ~2 MB of weights; on the bank,
2^16 buckets and character 2-grams measured no better in cross-validation."""
CHAR_GRAMS: Final = (3, 5)
"""Character n-gram lengths taken inside each word (padded with a space either side)."""
WORD_COUNT_EDGES: Final = (2, 5, 10)
"""Message length buckets in words: <=2, 3-5, 6-10, >10."""

_WORD: Final = re.compile(r"[^\W_]+|[?!]")
_BIAS_GRAM: Final = "\x00bias"
"""Every message has this gram, so the lexical part of every row is non-empty."""

STATE_FEATURES: Final = (
    "has_history", "one_exchange", "two_exchanges", "three_exchanges", "has_last_sources",
    "names_document_id", "names_known_document_id", "mentions_path",
    "words_up_to_2", "words_3_to_5", "words_6_to_10", "words_over_10", "ends_with_question_mark",
    "has_reference_word", "follow_up_resolved", "follow_up_ambiguous", "follow_up_unresolved",
    "injection_pattern",
    "similarity_to_last_question", "similarity_to_last_answer", "similarity_between_questions",
    "cites_two_documents",
)
"""The last four measure the thread: how close the message is to the last question and answer
(cosines of the shipped embedder's vectors), how close the thread's last two questions are to
each other (two questions far apart: two subjects a reference may mean), and whether the
answers cite two or more different documents."""
HISTORY_GRAM: Final = "h:"
"""Words of the thread's questions, hashed beside the message's own ("vpn or bastion?" named
two subjects; "and", "or", "czy", "a" between them)."""
HISTORY_WEIGHT: Final = 0.5
"""The length of the thread's hashed words beside the message's (1)."""


def fold(text: str) -> str:
    """Lower case without diacritics: users type Polish with and without them."""
    folded = unicodedata.normalize("NFKD", text.casefold().replace("ł", "l"))
    return "".join(char for char in folded if not unicodedata.combining(char))


def grams(text: str) -> list[str]:
    """The lexical units of a message, as strings to hash."""
    words = _WORD.findall(fold(text))
    units = [f"w:{word}" for word in words]
    units += [f"b:{first} {second}" for first, second in pairwise(words)]
    if words:
        units += [f"first:{words[0]}", f"last:{words[-1]}"]
    low, high = CHAR_GRAMS
    for word in words:
        padded = f" {word} "
        units += [f"c:{padded[start:start + size]}" for size in range(low, high + 1)
                  for start in range(len(padded) - size + 1)]
    units.append(_BIAS_GRAM)
    return units


def hashed(units: list[str]) -> tuple[npt.NDArray[np.int64], Vector]:
    """Bucket indices (sorted, unique) and their weights: log(1 + count), length 1.

    CRC-32, not `hash()`: Python salts string hashes per process."""
    counts = Counter(zlib.crc32(unit.encode()) & (HASH_DIMENSIONS - 1) for unit in units)
    indices = np.array(sorted(counts), dtype=np.int64)
    values = np.log1p(np.array([counts[i] for i in indices], dtype=np.float32))
    values /= np.float32(np.sqrt(float(values @ values)))
    return indices, values


def thread_texts(request: SelectionRequest) -> list[str]:
    """The texts whose vectors the features read: the message, the thread's last two
    questions and its last answer."""
    questions = [item.content for item in request.history if item.role == "user"]
    answers = [item.content for item in request.history if item.role == "assistant"]
    return [request.message, *questions[-2:], *answers[-1:]]


def history_vector(request: SelectionRequest, embed: Lookup, message: Vector) -> Vector:
    """The thread's features (the last four STATE_FEATURES): 0 without history."""
    questions = [item.content for item in request.history if item.role == "user"]
    answers = [item.content for item in request.history if item.role == "assistant"]
    if not questions:
        return np.zeros(4, dtype=np.float32)
    last = embed(questions[-1])
    cited = {document_of_chunk(found) for answer in answers for found in CITATION.findall(answer)}
    return np.array((
        float(message @ last),
        float(message @ embed(answers[-1])) if answers else 0.0,
        float(last @ embed(questions[-2])) if len(questions) > 1 else 1.0,
        len(cited) > 1,
    ), dtype=np.float32)


def state_vector(request: SelectionRequest) -> Vector:
    """The message's and the state's STATE_FEATURES, as 0/1 numbers in that order."""
    message, summary = request.message, request.state_summary
    exchanges = sum(1 for item in request.history if item.role == "user")
    ids = intents.document_id_tokens(message)
    count = len(intents.words(message))
    short, medium, long = WORD_COUNT_EDGES
    flags = (
        exchanges > 0, exchanges == 1, exchanges == 2, exchanges >= 3, summary.has_last_sources,
        bool(ids), bool(summary.known_document_ids_in_message), intents.mentions_path(message),
        count <= short, short < count <= medium, medium < count <= long, count > long,
        message.rstrip().endswith("?"),
        find_marker(message) is not None, summary.follow_up == "resolved",
        summary.follow_up == "ambiguous", summary.follow_up == "unresolved",
        intents.is_injection(message),
    )
    return np.array(flags, dtype=np.float32)


@dataclass(frozen=True)
class Features:
    """One message's features: a dense row (embedding, then state) and a sparse one."""

    dense: Vector
    indices: npt.NDArray[np.int64]
    values: Vector


def history_grams(request: SelectionRequest) -> list[str]:
    """The words of the thread's questions, marked apart from the message's."""
    return [f"{HISTORY_GRAM}{word}" for item in request.history if item.role == "user"
            for word in _WORD.findall(fold(item.content))]


def both_spellings(embed: Embed, texts: list[str]) -> dict[str, Vector]:
    """Each text's vector: the mean of it as typed and folded, all from one call of `embed`.
    USE reads "zrestartować" and "zrestartowac" as different words, and people type Polish
    both ways."""
    asked = list(dict.fromkeys([*texts, *map(fold, texts)]))
    rows = dict(zip(asked, embed(asked), strict=True))
    means = {}
    for text in texts:
        mean = rows[text] + rows[fold(text)]
        means[text] = (mean / np.float32(np.sqrt(float(mean @ mean)) or 1.0)).astype(np.float32)
    return means


def features_of(request: SelectionRequest, embed: Embed) -> Features:
    vectors = both_spellings(embed, thread_texts(request))
    indices, values = hashed(grams(request.message))
    thread = history_grams(request)
    if thread:
        more, weights = hashed(thread)
        indices, inverse = np.unique(np.concatenate([indices, more]), return_inverse=True)
        values = np.bincount(inverse, weights=np.concatenate([values, HISTORY_WEIGHT * weights]),
                             minlength=len(indices)).astype(np.float32)
    message = vectors[request.message]
    dense = np.concatenate([message, state_vector(request),
                            history_vector(request, vectors.__getitem__, message)]
                           ).astype(np.float32)
    return Features(dense=dense, indices=indices, values=values)
