"""The text analyzer shared by indexing, querying, snippets and in-memory ranking.

One function turns text into index terms: split into words (apostrophes inside a word do not
split it: `O'Brien` is one word), fold case and accents, drop a possessive `'s`, stem English
words with the Snowball stemmer, and cut runs of CJK characters (scripts written without
spaces) into overlapping character bigrams so a query for part of a sentence still matches.
Both index backends store these terms, pre-analysed, so they agree with each other and with
`rank.rank_events`. Changing what `analyze` returns for any text must bump `ANALYZER_VERSION`
(the index then rebuilds itself).

`parse_query` reads a query as people type it: words are OR-ed, `"quoted phrases"` must
appear as written, `type:` and `tag:` (or `#tag`) filter, and nothing a user can type raises.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache

ANALYZER_VERSION = 2

# A word: letters/digits, with inner apostrophes kept so "o'brien" and "don't" stay whole.
WORD_RE = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
PART_RE = re.compile(r"[^\W_]+")
APOSTROPHES = str.maketrans("", "", "'\u2019")
CJK_RE = re.compile(
    "[\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f]+"
)

# Query-side only: the index keeps every word (phrases need them); a query drops these when
# it has other words, so "when did she go to the gym" searches for "gym" (and "go").
STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "s", "t", "don", "doesn", "didn", "isn", "wasn", "aren", "weren", "won", "wouldn", "shouldn", "couldn", "let", "lets", "also", "ever"]
)


def _stemmer() -> Callable[[str], str]:
    try:
        import Stemmer  # PyStemmer: the Snowball stemmers in C

        return Stemmer.Stemmer("english").stemWord
    except ImportError:  # pragma: no cover - the pure-Python build of the same algorithm
        import snowballstemmer

        return snowballstemmer.stemmer("english").stemWord


_STEM = _stemmer()


def fold(word: str) -> str:
    """Lower-case, drop a possessive 's and apostrophes, strip accents (é -> e, ß -> ss)."""
    word = word.casefold()
    if "'" in word or "\u2019" in word:
        if word.endswith(("'s", "\u2019s")):
            word = word[:-2]
        word = word.translate(APOSTROPHES)
    if not word.isascii():
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
        word = word.casefold()  # NFKD can give capitals back: "ᴬ" and "𝐀" are "A"
    return word


def _bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=262144)
def word_terms(word: str) -> tuple[str, ...]:
    """The index terms of one word as written (cached: vocabularies are small).

    Every character of a term is a letter or digit: folding can leave others (NFKD turns
    "⑴" into "(1)"), and the word is split there, so the sqlite backend's tokenizer, which
    splits on anything else, sees exactly these terms."""
    folded = fold(word)
    if folded.isalnum() and (folded.isascii() or not CJK_RE.search(folded)):
        return (stem(folded),)
    out: list[str] = []
    for part in PART_RE.findall(folded):
        pos = 0
        for m in CJK_RE.finditer(part):
            if m.start() > pos:
                out.append(stem(part[pos : m.start()]))
            out.extend(_bigrams(m.group()))
            pos = m.end()
        if pos < len(part):
            out.append(stem(part[pos:]))
    return tuple(t for t in out if t)


def stem(word: str) -> str:
    """English Snowball stem of a folded word; digits and short words stay as they are."""
    if len(word) < 3 or not word.isalpha():
        return word
    return _STEM(word)


def analyze(text: str) -> list[str]:
    """Index terms of `text`, in order (duplicates kept: positions matter for phrases)."""
    return [t for w in WORD_RE.findall(text) for t in word_terms(w)]


_JOINED: dict[str, str] = {}


def analyzed(text: str) -> str:
    """`analyze` joined by spaces: the form both backends store and tokenise on whitespace.

    The hot path of indexing, hence a plain dict of word -> joined terms."""
    get = _JOINED.get
    out = []
    for word in WORD_RE.findall(text):
        terms = get(word)
        if terms is None:
            if len(_JOINED) > 500_000:
                _JOINED.clear()
            terms = _JOINED[word] = " ".join(word_terms(word))
        if terms:
            out.append(terms)
    return " ".join(out)


def iter_words(text: str) -> Iterator[tuple[int, int, tuple[str, ...]]]:
    """(start, end, terms) of each word in `text`, for marking matches in snippets."""
    for m in WORD_RE.finditer(text):
        yield m.start(), m.end(), word_terms(m.group())


# ------------------------------------------------------------------------------ queries

FIELD_RE = re.compile(r"(?<![^\s(])(type|tag):(\S*)", re.IGNORECASE)
HASHTAG_RE = re.compile(r"(?<![^\s(])#([^\W\d_][\w/-]*)")


@dataclass
class Query:
    """A parsed search: OR-ed terms, quoted phrases (required), compounds, and filters.

    `compounds` are words typed with inner punctuation (`ADR-016`): their parts are OR-ed
    terms and the whole is an optional phrase that ranks exact matches higher.
    """

    text: str
    terms: list[str] = field(default_factory=list)
    phrases: list[tuple[str, ...]] = field(default_factory=list)
    compounds: list[tuple[str, ...]] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    content: bool = False  # it holds a word that is no stopword (a tag or type counts)

    @property
    def empty(self) -> bool:
        return not self.terms and not self.phrases

    @property
    def all_terms(self) -> set[str]:
        """Every term that counts as a match (for snippets and in-memory scoring)."""
        return set(self.terms) | {t for p in self.phrases + self.compounds for t in p}


def parse_query(text: str) -> Query:
    """Read a query as typed. Never raises: unknown syntax is just words."""
    q = Query(text=text)
    rest = text

    def take_field(m: re.Match[str]) -> str:
        name, value = m.group(1).lower(), m.group(2).strip("\"'")
        if value:
            (q.types if name == "type" else q.tags).append(value.lower().lstrip("#"))
        return " "

    def take_tag(m: re.Match[str]) -> str:
        q.tags.append(m.group(1).lower().rstrip("/-"))
        return " "

    rest = FIELD_RE.sub(take_field, rest)
    rest = HASHTAG_RE.sub(take_tag, rest)
    words: list[tuple[str, bool]] = []  # (term, is a stopword)
    for i, part in enumerate(_split_quotes(rest)):
        if i % 2 == 1:  # inside quotes
            phrase = tuple(analyze(part))
            q.content = q.content or any(fold(w) not in STOPWORDS for w in WORD_RE.findall(part))
            if len(phrase) > 1:
                q.phrases.append(phrase)
            words.extend((t, False) for t in phrase[:1] if len(phrase) == 1)
            continue
        for chunk in part.split():
            terms = analyze(chunk)
            if len(terms) > 1:  # a compound as typed: ADR-016, 2026-02-14, e-mail
                q.compounds.append(tuple(terms))
            for w in WORD_RE.findall(chunk):
                stop = fold(w) in STOPWORDS
                words.extend((t, stop) for t in word_terms(w))
    kept = [t for t, stop in words if not stop] or [t for t, _ in words]
    q.content = q.content or any(not stop for _, stop in words) or bool(q.tags or q.types)
    if not kept and not q.phrases:  # only filters ("#infra", "type:decision"): search their words
        kept = [t for v in q.tags + q.types for t in analyze(v)]
    q.terms = list(dict.fromkeys(kept))
    q.phrases = list(dict.fromkeys(q.phrases))
    q.compounds = [c for c in dict.fromkeys(q.compounds) if c not in q.phrases]
    return q


def nothing_to_search(text: str) -> str | None:
    """Why `text` searches for nothing (no words, no phrase, no filter: empty or only
    punctuation), else None. `memvault search` refuses such a query as a usage error rather
    than answering "no matches" to a search that never ran."""
    if not parse_query(text).empty:
        return None
    shown = " ".join(text.split())
    return "nothing to search for: " + (f"the query {shown!r} has no words" if shown else "the query is empty")


def common_words_only(text: str) -> str | None:
    """A note when every word of an unquoted query is a stopword (`the of and`): a query drops
    such words when it has others, so here they were searched for as typed; else None."""
    q = parse_query(text)
    if q.content or q.phrases or not q.terms:
        return None
    words = ", ".join(dict.fromkeys(w.lower() for w in WORD_RE.findall(text)))
    return (f"the query has only common words ({words}), which a search drops when it has other words; "
            "they were searched for as typed: add a word that says what you are looking for")


def _split_quotes(text: str) -> list[str]:
    """Split on double quotes; an unbalanced quote just ends the last phrase at the end."""
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return text.split('"')
