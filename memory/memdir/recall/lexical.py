"""Offline lexical memory selector: path B's "pick at most 5 relevant files" without a model.

It scores what the manifest shows of each memory (name, description, type, path) and, at a low
weight, the head of its body against the user's message: BM25F over bilingual tokens (English
stems, CJK character bigrams) with a small vocabulary of developer words, a relevance threshold
so unrelated questions select nothing, and the spec's recently-used-tools rule. Unlike the agent
it has no single-word skip, so questions without spaces are handled. Design notes, measurements
and their history: docs/selector.md and docs/performance.md.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import filterfalse
from operator import add
from typing import Final, Protocol

__all__ = [
    "BODY_ONLY_CONCEPTS",
    "BODY_WEIGHT",
    "GENERIC_TOOL_BONUS",
    "LENGTH_SLOPE",
    "MAX_WORD_MATCHES",
    "MIN_FLOOR",
    "MIN_SCORE",
    "RELATIVE_CUT",
    "STEMMER_BACKENDS",
    "TOOL_BONUS",
    "CacheInfo",
    "LexicalMatch",
    "LexicalSelection",
    "ManifestItem",
    "QueryAlternative",
    "QueryConcept",
    "cache_info",
    "clear_caches",
    "explain_query",
    "load_stemmer",
    "select_lexical",
    "stemmer_backend",
    "tokenize",
    "use_stemmer",
]

# --- tuning constants ------------------------------------------------------------------------
#: BM25 term-frequency saturation.
K1: Final = 1.2
#: BM25 length normalisation; mild because every field is a one-liner.
B: Final = 0.5
#: Field weights of the BM25F pseudo-document.
NAME_WEIGHT: Final = 2.0
DESCRIPTION_WEIGHT: Final = 1.0
PATH_WEIGHT: Final = 0.5
TYPE_WEIGHT: Final = 0.3
#: The head of the body, what the prefetch would inject: it finds the memory a description
#: does not describe, at a weight low enough that descriptions still decide (docs/selector.md).
BODY_WEIGHT: Final = 0.25
#: A memory that matches the question only in its body needs this many of its concepts: one or
#: two common words ("good", "button") are in many bodies.
BODY_ONLY_CONCEPTS: Final = 3
#: A translation or synonym counts this much of the word the user actually typed.
SYNONYM_WEIGHT: Final = 0.9
#: A well-known tool standing for its kind ("linter" finding a ruff memory) counts this much.
NARROWER_WEIGHT: Final = 0.8
#: Minimum normalised score (share of the query's best possible score) to be selected, for a
#: query worth one rare word...
MIN_SCORE: Final = 0.45
#: ... lowered by this times the natural log of the query's worth in rare words: a long
#: question is rarely all about one memory, so the right one covers a smaller share of it...
LENGTH_SLOPE: Final = 0.06
#: ... but never below this share.
MIN_FLOOR: Final = 0.2
#: A selected file scores at least this share of the best file's score...
RELATIVE_CUT: Final = 0.7
#: ... or this share when it matches the concept that gives the best file most of its score
#: (the question's topic as the best file sees it): a second file about the same thing.
SHARED_CUT: Final = 0.55
#: A query word found in no memory is charged this share of the idf of a word found in one:
#: it counts against the score, but a stray "refund" or "Tom's" must not sink a good match.
UNMATCHED_CHARGE: Final = 0.7
#: Weight of a one-character Han query word.
UNIGRAM_WEIGHT: Final = 0.3
#: Weight of a generic request word (add, write, fix, run, ...).
WEAK_WEIGHT: Final = 0.3
#: When more files than this clear the cuts on the question's words, only the best is selected
#: (a tool's warnings come on top, within the caller's limit).
MAX_WORD_MATCHES: Final = 3
#: Score added to a warning, gotcha or known-issues memory of a tool the user just used, over
#: the query's floor (so it is selected on this alone): the tool stands for the unnamed topic
#: of a next-step question ("looks fine, apply it to prod" after ``terraform plan``).
TOOL_BONUS: Final = 0.05
#: The same for the agent's general-purpose tools (Bash, Read, Edit, ...), used nearly every
#: turn, which say little about what the next step is about: it only raises a warning the
#: question already matches.
GENERIC_TOOL_BONUS: Final = 0.15

# --- tokenisation ----------------------------------------------------------------------------
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KANA = "\u3040-\u30ff\u31f0-\u31ff"
_RUNS = re.compile(
    rf"(?P<han>[{_HAN}]+)"
    r"|(?P<kata>[\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff]+)"
    r"|(?P<hira>[\u3040-\u309f]+)"
    rf"|(?P<word>[^\W_{_HAN}{_KANA}]+)"
)
_APOSTROPHES = re.compile(r"['’]")
_ASCII_WORDS = re.compile(r"[a-z0-9]+")
_ASCII_WORDS_OR_NUL = re.compile(r"[a-z0-9]+|\0")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN_STOP: Final = _words(
    """a an the and or but if then else of to in on at by for with from into onto about as is are
    was were be been being am do does did doing done have has had having i me my mine myself we us
    our ours you your yours he him his she her it its they them their this that these those there
    here what whats which who whom whose when where why how can could should would will shall may
    might must not no yes so too very just also any some all each every more most other such only
    own same than up down out over again once now still get gets got let lets make want need needs
    please thanks thank help tell know think ok okay hey hi im ive id youre dont doesnt isnt arent
    cant wont thing things something anything way like me one ones give gave go going look looks
    lot really sure whether either neither via per etc e g ie eg ill youll itll thats theres
    theyre wed fine alright already anyway basically probably since until while because though
    although wants wanted"""
)
#: Words never indexed: stop words and single letters (a lone digit is kept: "step 3").
_SKIP_WORDS: Final = _EN_STOP | frozenset("abcdefghijklmnopqrstuvwxyz")
#: Words that say what to do rather than what about ("write integration tests", "add type
#: hints"): kept, but at WEAK_WEIGHT, so neither their matches nor their absence decide much.
#: The generic nouns of code (function, file, 代码, ...) in lexical_vocab weigh the same.
_EN_WEAK: Final = _words(
    """add write put fix run call make create update change show find keep set start check see
    send last next new old current good best bad better big small stuff work works working today
    person someone anyone actually maybe possible able time use using used ask try"""
)
#: Chinese function words and question words: cut points inside Han runs, never tokens.
#: Longer entries are tried first. Characters that start content words (用, 要, 会, 能, 地, 对,
#: 过) are deliberately absent: 用法, 需要, 会议, 性能, 本地, 对外, 通过.
_ZH_STOP: Final = tuple(
    sorted(
        _words(
            """什么 怎么 怎样 怎么样 如何 为什么 为何 哪里 哪儿 哪个 哪些 多少 是否 是不是 有没有
        能不能 可不可以 要不要 可以 应该 需要 我们 你们 他们 自己 一下 一个 一些 这个 那个 这些
        那些 这样 那样 已经 还是 或者 以及 比较 一般 帮我 请问 告诉 之前 记得 的 了 吗 呢 吧 啊
        呀 嘛 么 是 在 有 和 与 及 或 也 都 就 还 又 很 太 我 你 他 她 它 这 那 个 把 被 给 让 从
        到 哪 谁 何"""
        ),
        key=lambda word: (-len(word), word),
    )
)
_ZH_STOP_RE = re.compile("|".join(map(re.escape, _ZH_STOP)))


class _StemmerLike(Protocol):
    def stemWords(self, words: list[str]) -> list[str]: ...  # noqa: N802 (PyStemmer's name)


#: The implementations of Snowball's English stemmer, in order of preference: PyStemmer (C),
#: else the pure-Python ``snowballstemmer``, which the VS Code extension bundles because a
#: .vsix cannot carry a compiled module for every platform. Same algorithm, same stems
#: (tests/core/test_pure_fallbacks.py); the pure one is ~10x slower per uncached word.
STEMMER_BACKENDS: Final = ("pystemmer", "snowballstemmer")
#: The backend chosen by :func:`use_stemmer`; ``None``: the first one importable.
_backend: list[str | None] = [None]


class _LockedStemmer:
    """A pure-Python stemmer keeps its word in instance state, and selections run in worker
    threads: one word at a time. (PyStemmer's call holds the GIL throughout.)"""

    def __init__(self, stemmer: _StemmerLike) -> None:
        self._stemmer = stemmer
        self._lock = threading.Lock()

    def stemWords(self, words: list[str]) -> list[str]:  # noqa: N802 (PyStemmer's name)
        with self._lock:
            return self._stemmer.stemWords(words)


def load_stemmer(backend: str) -> _StemmerLike:
    """Snowball's English stemmer from ``backend`` (one of :data:`STEMMER_BACKENDS`).

    Raises ImportError when that package is not installed."""
    if backend == "pystemmer":
        import Stemmer  # type: ignore[import-not-found,unused-ignore]  # PyStemmer ships no stubs

        stemmer: _StemmerLike = Stemmer.Stemmer("english")
        return stemmer
    if backend == "snowballstemmer":
        # The generated module itself: ``snowballstemmer.stemmer()`` hands out PyStemmer's class
        # whenever PyStemmer is installed.
        from snowballstemmer.english_stemmer import (  # type: ignore[import-not-found,import-untyped,unused-ignore]
            EnglishStemmer,
        )

        return _LockedStemmer(EnglishStemmer())
    raise ValueError(f"unknown stemmer backend {backend!r}; expected one of {STEMMER_BACKENDS}")


@lru_cache(maxsize=1)
def _loaded_stemmer() -> tuple[str, _StemmerLike]:
    # Imported lazily: the selector must not cost anything until it is used.
    chosen = _backend[0]
    if chosen is not None:
        return chosen, load_stemmer(chosen)
    for backend in STEMMER_BACKENDS:
        try:
            return backend, load_stemmer(backend)
        except ImportError:
            continue
    raise ImportError(
        "memdir's lexical selector needs an English Snowball stemmer: "
        "install PyStemmer or (pure Python) snowballstemmer"
    )


def _stemmer() -> _StemmerLike:
    return _loaded_stemmer()[1]


def stemmer_backend() -> str:
    """The backend stemming now: the one :func:`use_stemmer` chose, else the first importable."""
    return _loaded_stemmer()[0]


def use_stemmer(backend: str | None) -> None:
    """Stem with ``backend`` from now on (``None``: the first importable one) and forget
    everything computed from the previous backend's stems (tests compare the two)."""
    if backend is not None and backend not in STEMMER_BACKENDS:
        raise ValueError(f"unknown stemmer backend {backend!r}; expected one of {STEMMER_BACKENDS}")
    _backend[0] = backend
    clear_caches()
    # Every memoised function of this module derives from stems (the vocabulary's, the
    # warning words', the stemmer itself): clearing them all cannot miss one added later.
    for value in list(globals().values()):
        cache_clear = getattr(value, "cache_clear", None)
        if callable(cache_clear):
            cache_clear()


_VOWELS = frozenset("aeiouy")
#: Stems by word. A plain dict rather than ``lru_cache``: the words missing from it, for all the
#: unseen memories of a call, are stemmed in one ``stemWords`` call (~0.15 us a word instead of
#: ~0.35 us a call), and lookups are C-level ``map``s. Emptied when it grows past the size.
_stem_cache: dict[str, str] = {}
_STEM_CACHE_SIZE: Final = 65536


#: Words Snowball folds into an unrelated word: "locale" and "localization" become "local",
#: so a question about the locale file would find notes about the local dev stack, and
#: "settings" becomes "set", a request word weighing next to nothing; "response" and
#: "responsible" meet in "respons".
_STEM_OVERRIDES: Final = {
    **dict.fromkeys(
        _words(
            """locale locales localization localizations localisation localisations localize
            localise localized localised"""
        ),
        "locale",
    ),
    **dict.fromkeys(("setting", "settings"), "setting"),
    # "responsible" (who owns it) is not "response" (what an API returns).
    **dict.fromkeys(_words("responsible responsibility responsibilities"), "responsib"),
    # "policy" is not "police", nor "organization" an "organ".
    **dict.fromkeys(_words("policy policies"), "policy"),
    **dict.fromkeys(
        _words("organization organizations organisation organisations"), "organization"
    ),
}


def _stem_words(words: list[str]) -> list[str]:
    if len(_stem_cache) > _STEM_CACHE_SIZE:
        _stem_cache.clear()
    cache = _stem_cache
    missing = list(dict.fromkeys(filterfalse(cache.__contains__, words)))
    if missing:
        cache.update(zip(missing, _snowball(missing), strict=True))
    try:
        return list(map(cache.__getitem__, words))
    except KeyError:  # another thread (selection runs in worker threads) emptied the cache
        return _snowball(words)


def _snowball(words: list[str]) -> list[str]:
    stems = _stemmer().stemWords(_singular(words))
    if _STEM_OVERRIDES.keys().isdisjoint(words):
        return stems
    return [_STEM_OVERRIDES.get(w, stem) for w, stem in zip(words, stems, strict=True)]


def _singular(words: list[str]) -> list[str]:
    # Snowball keeps the "s" of vowel-less plurals: PRs, MRs and SLAs would never meet PR.
    return [
        w[:-1] if len(w) > 2 and w[-1] == "s" and w.isascii() and _VOWELS.isdisjoint(w[:-1]) else w
        for w in words
    ]


def _stem(word: str) -> str:
    stem = _stem_cache.get(word)
    return stem if stem is not None else _stem_words([word])[0]


@lru_cache(maxsize=1)
def _weak_stems() -> frozenset[str]:
    from memdir.recall.lexical_vocab import GENERIC_WORDS

    # By stem: "adding", "running" and "changes" ask for an action as much as "add" does.
    words = [word for word in (*_EN_WEAK, *GENERIC_WORDS) if word.isascii()]
    return frozenset(_stem_words(words))


#: Traditional Chinese and Japanese forms of characters common in developer text, folded to
#: simplified Chinese so 東京/东京, 翻訳/翻译, 設計/设计 meet. Deliberately short: a full
#: conversion table (OpenCC) costs a dictionary load for little gain on one-line descriptions.
_FOLD_PAIRS = """
    東东 設设 訳译 譯译 語语 書书 報报 発发 發发 開开 関关 關关 際际 実实 實实 験验 驗验 続续 續续
    変变 變变 據据 拠据 庫库 環环 務务 題题 問问 門门 時时 間间 認认 証证 證证 権权 權权 録录 錄录
    誤误 説说 說说 動动 計计 機机 図图 圖图 処处 處处 検检 檢检 読读 讀读 様样 樣样 請请 応应 應应
    議议 頭头 単单 單单 対对 對对 體体 測测 試试 確确 啓启 運运 営营 營营 業业 連连 絡络 経经 經经
    態态 視视 監监 覧览 覽览 気气 氣气 電电 話话 傳传 伝传 轉转 転转 換换 細细 節节 錯错 記记 紀纪
    標标 準准 數数 値值 號号 碼码 網网 層层 級级 類类 別别 優优 質质 價价 寫写 項项 後后 顯显 頁页
    雙双 組组 織织 員员 團团 隊队 進进 條条 達达 過过 還还 這这 個个 們们 從从 為为 麼么 嗎吗 見见
    現现 場场 區区 國国 產产 製制 導导 擇择 選选 擴扩 張张 縮缩 減减 滿满 満满 歸归 帰归 檔档 聯联
    繫系 審审 査查 閱阅 總总 総总 結结 術术 資资 負负 責责 當当 雲云 線线 鍵键 鑰钥 儲储 緩缓 並并
    併并 遅迟 統统 効效 舊旧 載载 習习 慣惯 戶户 兩两 両两 滙汇 復复 齊齐 斉齐 壓压 圧压 縁缘 緣缘
    覚觉 覺觉 學学 稱称 闘斗 鬥斗 鬪斗 戦战 戰战 誰谁
"""
_FOLD = str.maketrans({pair[0]: pair[1] for pair in _FOLD_PAIRS.split()})
_FOLD_CHARS = re.compile("[" + "".join(pair[0] for pair in _FOLD_PAIRS.split()) + "]")
_WIDTH_FORMS = re.compile(r"[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\uff66-\uff9f]")


def _normalize(text: str) -> str:
    if text.isascii():
        text = text.lower()
    else:
        # NFKC only where it changes tokens (full-width Latin, half-width katakana); full-width
        # punctuation separates tokens either way, and normalising every Chinese text costs more
        # than the rest of its tokenisation.
        if _WIDTH_FORMS.search(text):
            text = unicodedata.normalize("NFKC", text)
        text = text.lower()
        if _FOLD_CHARS.search(text):
            text = text.translate(_FOLD)
    return _APOSTROPHES.sub("", text) if "'" in text or "’" in text else text


def _bigrams(piece: str) -> list[str]:
    if len(piece) == 1:
        return [piece]
    return [piece[i : i + 2] for i in range(len(piece) - 1)]


def _index_tokens(text: str) -> tuple[list[str], float]:
    """Document tokens of ``text`` and its length in words.

    A Chinese word is ~2 characters, so a bigram counts as half a word: a Chinese description
    is not "longer" than the English one saying the same. Single characters inside longer
    pieces are not indexed; :func:`_score` counts them in the text when a query has one.
    """
    return _index_normalized(_normalize(text))


def _index_normalized(text: str) -> tuple[list[str], float]:
    return _index_many([text])[0]


def _unstemmed(text: str) -> tuple[list[str], list[int], float]:
    """Tokens of non-ASCII normalised text with its Latin words not yet stemmed, the positions
    of those words, and the text's length in words."""
    tokens: list[str] = []
    latin: list[int] = []
    whole = 0  # katakana and Latin words; every other token is a bigram, half a word
    # Function words are Han-only strings, so one pass over the whole text cuts every Han run.
    # Bigrams are cut here: a regex giving them directly (an overlapping lookahead) is 3-4x
    # slower than this loop over runs. Hiragana runs (particles) are skipped.
    for han, kata, _, word in _RUNS.findall(_ZH_STOP_RE.sub(" ", text)):
        if han:
            if len(han) < 3:
                tokens.append(han)
            else:
                tokens += map(add, han, han[1:])
        elif kata:
            tokens.append(kata)
            whole += 1
        elif word and word not in _SKIP_WORDS:
            latin.append(len(tokens))
            tokens.append(word)
            whole += 1
    return tokens, latin, whole + 0.5 * (len(tokens) - whole)


def _index_many(texts: list[str]) -> list[tuple[list[str], float]]:
    """Document tokens and length of each normalised text (see :func:`_index_tokens`).

    The texts are cut and stemmed together: the ASCII ones, most of a manifest, in one regex
    scan split back at NUL separators, and every Latin word in one stemming pass. A dozen
    calls per text instead were most of the time to index unseen memories.
    """
    batch = [i for i, text in enumerate(texts) if text.isascii() and "\0" not in text]
    rest = [i for i, text in enumerate(texts) if not text.isascii() or "\0" in text]
    done: dict[int, tuple[list[str], float]] = {}
    words = _ASCII_WORDS_OR_NUL.findall("\0".join([texts[i] for i in batch])) if batch else []
    words = list(filterfalse(_SKIP_WORDS.__contains__, words))
    cut = [_unstemmed(texts[i].replace("\0", " ")) for i in rest]
    for tokens, latin, _ in cut:
        words += [tokens[at] for at in latin]
    stems = _stem_words(words)
    if batch:
        # The ASCII texts' stems come first, NUL-separated; the others' Latin words follow.
        ascii_count = len(stems) - sum(len(latin) for _, latin, _ in cut)
        fields = " ".join(stems[:ascii_count]).split("\0")
        for i, field in zip(batch, fields, strict=True):
            tokens = field.split()
            done[i] = (tokens, float(len(tokens)))
        stems = stems[ascii_count:]
    at_stem = 0
    for i, (tokens, latin, length) in zip(rest, cut, strict=True):
        for at in latin:
            tokens[at] = stems[at_stem]
            at_stem += 1
        done[i] = (tokens, length)
    return [done[i] for i in range(len(texts))]


#: Directories and types repeat across files: tokenise each once.
_short_tokens = lru_cache(maxsize=512)(_index_tokens)


@lru_cache(maxsize=512)
def _directory_tokens(directory: str) -> tuple[list[str], float]:
    return _index_tokens(_path_text(directory))


def tokenize(text: str) -> list[str]:
    """Index tokens of ``text`` as documents are indexed (exposed for diagnostics and tests).

    Latin words are stemmed, katakana words kept whole, Han pieces give character bigrams (a
    one-character piece stays one token).
    """
    return _index_tokens(text)[0]


def _is_han(char: str) -> bool:
    return (
        "\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf" or "\uf900" <= char <= "\ufaff"
    )


# --- the bilingual synonym table -------------------------------------------------------------
# The vocabulary itself (memdir.recall.lexical_vocab) is imported on first use, like the stemmer.


@dataclass(frozen=True)
class QueryAlternative:
    """A wording a query concept is looked for as: the typed word, a translation or a tool."""

    tokens: tuple[str, ...]  # matched as a phrase: the mean of its tokens' scores
    surface: str


@dataclass(frozen=True)
class _SynonymTable:
    """Where each surface of the vocabulary is, by the line numbers of its groups.

    Only this index is built up front (~1-2 ms, mostly stemming the Latin surfaces); a group's
    alternatives are tokenised when a question first uses it (:func:`_alternatives`).
    """

    #: stemmed Latin phrase -> groups containing it
    latin: dict[tuple[str, ...], tuple[int, ...]]
    #: CJK or katakana surface -> groups containing it
    cjk: dict[str, tuple[int, ...]]
    #: Lengths of the CJK surfaces, longest first, and the characters they start with: the
    #: query is scanned with dictionary lookups (a ~300-way regex alternation costs several
    #: milliseconds to compile on the first call, the scan microseconds per query).
    cjk_lengths: tuple[int, ...]
    cjk_first: frozenset[str]
    max_latin_len: int
    #: Latin keys and CJK surfaces of weak words (WEAK_WEIGHT): generic nouns like 代码, code.
    weak: frozenset[object]


def _surface_tokens(surface: str) -> tuple[str, ...]:
    """How a synonym surface appears among document tokens: stems, a katakana word, bigrams."""
    return tuple(_index_tokens(surface)[0])


def _matchable(tokens: tuple[str, ...]) -> bool:
    # A surface made of function words around one character (怎么用, 推到, 多少个) is
    # recognised in a question, but its remains ("用") would match any text holding that
    # character: only its translations are looked for in the memories.
    return bool(tokens) and not any(len(t) == 1 and _is_han(t) for t in tokens)


def _latin_words(surface: str) -> tuple[str, list[str] | None]:
    """A vocabulary surface normalised, and its words when it is Latin (None: CJK)."""
    text = _normalize(surface)
    return text, _ASCII_WORDS.findall(text) if text.isascii() else None


def _latin_key(surface: str) -> tuple[str, ...] | None:
    words = _latin_words(surface)[1]
    # Stop words stay in the key ("on call"): the query side matches before dropping them.
    return tuple(_stem_words(words)) if words else None


@lru_cache(maxsize=1)
def _synonyms() -> _SynonymTable:
    from memdir.recall.lexical_vocab import GENERIC_WORDS, SYNONYM_GROUPS

    entries = [
        (index, *_latin_words(surface))
        for index, group in enumerate(SYNONYM_GROUPS)
        for surface in group
    ]
    # Every Latin word of the vocabulary in one stemming pass.
    stems = iter(_stem_words([w for _, _, words in entries if words for w in words]))
    latin: dict[tuple[str, ...], list[int]] = {}
    cjk: dict[str, list[int]] = {}
    for index, text, words in entries:
        if words:
            groups = latin.setdefault(tuple(next(stems) for _ in words), [])
        elif words is None:
            groups = cjk.setdefault(text, [])
        else:
            continue
        if index not in groups:
            groups.append(index)
    return _SynonymTable(
        {key: tuple(groups) for key, groups in latin.items()},
        {surface: tuple(groups) for surface, groups in cjk.items()},
        tuple(sorted({len(s) for s in cjk}, reverse=True)),
        frozenset(s[0] for s in cjk),
        max((len(k) for k in latin), default=1),
        frozenset((stem,) for stem in _weak_stems())
        | frozenset(_normalize(word) for word in GENERIC_WORDS if not word.isascii()),
    )


@cache
def _group_alternatives(index: int) -> tuple[tuple[QueryAlternative, float], ...]:
    """The words of one vocabulary line as alternatives, with the tools of its kind."""
    from memdir.recall.lexical_vocab import NARROWER, SYNONYM_GROUPS

    group = SYNONYM_GROUPS[index]
    line = [(alt, SYNONYM_WEIGHT) for s in group if _matchable((alt := _alternative(s)).tokens)]
    line += [(_alternative(n), NARROWER_WEIGHT) for s in group for n in NARROWER.get(s, ())]
    return tuple(line)


@lru_cache(maxsize=2048)
def _alternative(surface: str) -> QueryAlternative:
    return QueryAlternative(_surface_tokens(surface), surface)


@lru_cache(maxsize=1024)
def _alternatives(groups: tuple[int, ...]) -> tuple[tuple[QueryAlternative, float], ...]:
    """Alternatives of a surface on these lines: a word on several lines (发布 is both
    "release" and "deploy") gets every line's words, each once, at the highest weight given."""
    merged: dict[tuple[str, ...], tuple[QueryAlternative, float]] = {}
    for index in groups:
        for alt, weight in _group_alternatives(index):
            if weight > merged.get(alt.tokens, _NO_ALTERNATIVE)[1]:
                merged[alt.tokens] = (alt, weight)
    return tuple(merged.values())


_NO_ALTERNATIVE: Final = (QueryAlternative((), ""), 0.0)


# --- the query -------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryConcept:
    """One idea of the query: matched by its best alternative."""

    surface: str  # what the user typed, shown in matched_terms
    alternatives: tuple[tuple[QueryAlternative, float], ...]  # with the weight of each
    weight: float  # share of a "word" this concept stands for
    #: Share of a rare word's idf the concept costs when no memory matches it.
    charge: float = UNMATCHED_CHARGE


def _word_concepts(words: list[str]) -> list[QueryConcept]:
    table = _synonyms()
    stems = [_stem(w) for w in words]
    concepts: list[QueryConcept] = []
    i = 0
    while i < len(words):
        for size in range(min(table.max_latin_len, len(words) - i), 0, -1):
            key = tuple(stems[i : i + size])
            groups = table.latin.get(key)
            if groups is not None:
                alternatives = _alternatives(groups)
                surface = " ".join(words[i : i + size])
                weight = WEAK_WEIGHT if key in table.weak else 1.0
                concepts.append(_synonym_concept(surface, key, alternatives, weight))
                i += size
                break
        else:
            if words[i] not in _EN_STOP:
                alt = QueryAlternative((stems[i],), words[i])
                weight = WEAK_WEIGHT if stems[i] in _weak_stems() else 1.0
                # A number no memory has (PR #482, us-east-1) is a value of the task, not its
                # topic; one a memory has (Postgres 16, 5%) pins that memory.
                charge = WEAK_WEIGHT * UNMATCHED_CHARGE if words[i].isdigit() else UNMATCHED_CHARGE
                concepts.append(QueryConcept(words[i], ((alt, 1.0),), weight, charge))
            i += 1
    return concepts


def _synonym_concept(
    surface: str,
    typed: tuple[str, ...],
    alternatives: tuple[tuple[QueryAlternative, float], ...],
    weight: float,
) -> QueryConcept:
    weighted = tuple((alt, 1.0 if alt.tokens == typed else w) for alt, w in alternatives)
    if _matchable(typed) and not any(w == 1.0 for _, w in weighted):
        weighted = ((QueryAlternative(typed, surface), 1.0), *weighted)
    return QueryConcept(surface, weighted, weight)


def _han_concepts(piece: str) -> list[QueryConcept]:
    grams = _bigrams(piece)
    if len(piece) == 1:
        # A lone character (写, 看, 用) is more often a verb of the question than its topic.
        weight = UNIGRAM_WEIGHT
    else:
        # n characters hold about n/2 words but give n-1 overlapping bigrams, many spanning a
        # word boundary; weight them so a Chinese phrase weighs what the same English one would.
        weight = (len(piece) / 2) / len(grams) if len(grams) > 1 else 1.0
    return [QueryConcept(g, ((QueryAlternative((g,), g), 1.0),), weight) for g in grams]


def explain_query(query: str) -> list[QueryConcept]:
    """The concepts ``query`` is read as, in order, with the wordings each is looked for as and
    its weight: what the selector matches memories against (for ``recall --explain``)."""
    text = _normalize(query)
    table = _synonyms()
    concepts: list[QueryConcept] = []
    # CJK synonyms first: the matched span is cut out so its characters don't also make bigrams.
    if not text.isascii():
        text = _take_cjk_synonyms(text, table, concepts)
    words: list[str] = []
    for match in _RUNS.finditer(text):
        kind = match.lastgroup
        run = match.group()
        if kind == "word":
            if len(run) > 1 or run.isdigit():
                words.append(run)
            continue
        concepts.extend(_word_concepts(words))
        words = []
        if kind == "kata":
            alt = QueryAlternative((run,), run)
            concepts.append(QueryConcept(run, ((alt, 1.0),), 1.0))
        elif kind == "han":
            for piece in _ZH_STOP_RE.split(run):
                if piece:
                    concepts.extend(_han_concepts(piece))
    concepts.extend(_word_concepts(words))
    return _dedupe(concepts)


def _take_cjk_synonyms(text: str, table: _SynonymTable, concepts: list[QueryConcept]) -> str:
    """Append a concept for each CJK synonym surface in ``text``, scanning left to right and
    taking the longest surface at each position; return ``text`` with those spans blanked."""
    kept: list[str] = []
    start = i = 0
    while i < len(text):
        if text[i] in table.cjk_first:
            for size in table.cjk_lengths:
                surface = text[i : i + size]
                groups = table.cjk.get(surface) if len(surface) == size else None
                if groups is not None:
                    alternatives = _alternatives(groups)
                    typed = _surface_tokens(surface)
                    weight = WEAK_WEIGHT if surface in table.weak else 1.0
                    concepts.append(_synonym_concept(surface, typed, alternatives, weight))
                    kept.append(text[start:i])
                    i = start = i + size
                    break
            else:
                i += 1
        else:
            i += 1
    if not kept:
        return text
    kept.append(text[start:])
    return " ".join(kept)


def _dedupe(concepts: list[QueryConcept]) -> list[QueryConcept]:
    # "test ... testing", 值班 twice or 监控看板 (one synonym group) is one idea; counting it
    # twice would let it dominate the score.
    seen: set[frozenset[tuple[str, ...]]] = set()
    out: list[QueryConcept] = []
    for concept in concepts:
        key = frozenset(alt.tokens for alt, _ in concept.alternatives)
        if key not in seen:
            seen.add(key)
            out.append(concept)
    # A word typed in the question is its own concept: "alembic ... 迁移" must not count an
    # alembic memory twice, once for "alembic" and once for 迁移's well-known tool alembic.
    typed = {alt.tokens for c in out for alt, weight in c.alternatives if weight == 1.0}
    return [
        QueryConcept(
            c.surface,
            tuple(aw for aw in c.alternatives if aw[1] == 1.0 or aw[0].tokens not in typed),
            c.weight,
            c.charge,
        )
        if any(w < 1.0 and alt.tokens in typed for alt, w in c.alternatives)
        else c
        for c in out
    ]


# --- documents -------------------------------------------------------------------------------
class _Document:
    """A memory as the scorer sees it: its tokens by field (the manifest's and the body's),
    kept as lists.

    Term frequencies are counted for the few tokens a question shares with the memory, when it
    is scored (``list.count`` in C), instead of summing every token's field weights into a dict
    when the memory is first seen: indexing 200 unseen memories is the cold path's cost.
    """

    # A plain slotted class: a frozen dataclass's __init__ costs more than counting the tokens.
    __slots__ = (
        "body",
        "desc",
        "directory",
        "file",
        "han_fields",
        "han_text",
        "keys",
        "length",
        "manifest_han",
        "manifest_keys",
        "name",
        "raw",
        "type",
    )

    def __init__(
        self,
        fields: tuple[list[str], list[str], list[str], list[str], list[str], list[str]],
        length: float,
        raw: str,
        han_fields: tuple[tuple[str, float], ...],
        body_han: bool = False,
    ) -> None:
        self.name, self.desc, self.directory, self.file, self.type, self.body = fields
        self.manifest_keys = frozenset().union(
            self.name, self.desc, self.directory, self.file, self.type
        )
        self.keys = self.manifest_keys.union(self.body)
        self.length = length
        self.raw = raw  # name, description and path as written, for the warning words
        #: Normalised text and weight of each field holding Han characters, for 1-char terms
        #: (the body's last, when ``body_han``).
        self.han_fields = han_fields
        self.han_text = "\n".join(text for text, _ in han_fields)
        #: The same without the body's.
        manifest = han_fields[:-1] if body_han else han_fields
        self.manifest_han = "\n".join(text for text, _ in manifest)

    def tf(self, token: str) -> float:
        """The field-weighted frequency of ``token`` (BM25F's pseudo-document)."""
        return (
            NAME_WEIGHT * self.name.count(token)
            + DESCRIPTION_WEIGHT * self.desc.count(token)
            + PATH_WEIGHT * (self.directory.count(token) + self.file.count(token))
            + TYPE_WEIGHT * self.type.count(token)
            + BODY_WEIGHT * self.body.count(token)
        )

    def char_tf(self, char: str) -> float:
        """The field-weighted count of one Han character, which is not indexed on its own."""
        return sum(weight * text.count(char) for text, weight in self.han_fields)

    @property
    def name_tokens(self) -> frozenset[str]:
        """Tokens of the name and the file name, where the tools rule looks for a tool."""
        return frozenset(self.name + self.file)

    @property
    def desc_tokens(self) -> frozenset[str]:
        return frozenset(self.desc)


#: The labels every memory's body carries: they would match "why" or "apply" in any question.
_LABELS = re.compile(r"\*\*(?:Why|How to apply):\*\*")
_PATH_SEPARATORS = re.compile(r"[/\-_.]+")


def _path_text(rel_path: str) -> str:
    stem = rel_path[:-3] if rel_path.lower().endswith(".md") else rel_path
    return _PATH_SEPARATORS.sub(" ", stem)


#: Words marking a memory as a warning about a tool rather than its plain usage doc: English as
#: stems (matched against the memory's tokens), phrases and CJK words as substrings.
_WARNING_WORDS: Final = """warning warn gotcha pitfall caveat bug never avoid careful beware trap
    footgun broken breaks quirk limitation workaround deprecated dangerous"""


@lru_cache(maxsize=1)
def _warning_stems() -> frozenset[str]:
    return frozenset(_stem(word) for word in _WARNING_WORDS.split())


_WARNING_PHRASES: Final = (
    "known issue",
    "don't",
    "dont ",
    "do not",
    "must not",
    "not supported",
    "doesn't support",
)
_WARNING_CJK = re.compile(
    "注意|坑|警告|陷阱|不要|避免|已知问题|禁止|小心|不支持|危险|"
    "落とし穴|罠|ハマり|避け|既知の問題|バグ|しないで"
)


def _is_warning(tokens: frozenset[str], text: str) -> bool:
    if tokens & _warning_stems():
        return True
    lowered = text.lower().replace("’", "'")
    if any(phrase in lowered for phrase in _WARNING_PHRASES):
        return True
    return not text.isascii() and _WARNING_CJK.search(text) is not None


#: Documents by (path, name, description, type, body): only new or edited memories are indexed
#: again.
#: Emptied when it would grow past _DOCUMENT_CACHE_SIZE.
_document_cache: dict[tuple[str, str, str, str, str], _Document] = {}
_DOCUMENT_CACHE_SIZE: Final = 4096
#: Documents indexed since clear_caches(), for cache_info(); a list, so no ``global`` is needed.
_indexed = [0]


def _documents(candidates: Sequence[ManifestItem]) -> list[_Document]:
    keys = [
        (c.rel_path, c.name or "", c.description or "", c.type or "", c.body or "")
        for c in candidates
    ]
    cache = _document_cache
    docs = list(map(cache.get, keys))
    if None not in docs:
        return docs  # type: ignore[return-value]  # just checked: no None
    missing = list(dict.fromkeys(key for key, doc in zip(keys, docs, strict=True) if doc is None))
    built = dict(zip(missing, _index_documents(missing), strict=True))
    _indexed[0] += len(built)
    if len(cache) + len(built) > _DOCUMENT_CACHE_SIZE:
        cache.clear()
    cache.update(built)
    # From this call's own results: another thread may empty the cache meanwhile.
    return [built[key] if doc is None else doc for key, doc in zip(keys, docs, strict=True)]


@dataclass(frozen=True)
class CacheInfo:
    #: Memories held indexed, by path, name, description, type and body.
    documents: int
    #: Memories indexed (tokenised) since :func:`clear_caches`; a selection over memories
    #: already seen, unedited, adds none.
    indexed: int


def cache_info() -> CacheInfo:
    """How much of the selector's work is cached (diagnostics: a cold or a warm selection)."""
    return CacheInfo(len(_document_cache), _indexed[0])


def clear_caches() -> None:
    """Forget indexed documents and stems (benchmarks time the cold path with it)."""
    _document_cache.clear()
    _indexed[0] = 0
    _stem_cache.clear()
    _short_tokens.cache_clear()
    _directory_tokens.cache_clear()


def _index_documents(keys: list[tuple[str, str, str, str, str]]) -> list[_Document]:
    texts: list[str] = []  # name, description, file name and body of each memory, normalised
    for rel_path, name, description, _, body in keys:
        file_name = rel_path.rpartition("/")[2]
        # Separators (- _ .) end runs in the tokeniser anyway: only ".md" must go.
        if file_name[-3:].lower() == ".md":
            file_name = file_name[:-3]
        texts += (
            _normalize(name),
            _normalize(description),
            _normalize(file_name),
            _normalize(_LABELS.sub(" ", body)),
        )
    fields = iter(_index_many(texts))
    out: list[_Document] = []
    for n, (
        (rel_path, name, description, mem_type, body),
        (name_tokens, name_length),
        (desc_tokens, desc_length),
        (file_tokens, file_length),
        (body_tokens, body_length),
    ) in enumerate(zip(keys, fields, fields, fields, fields, strict=True)):
        dir_tokens, dir_length = _directory_tokens(rel_path.rpartition("/")[0])
        type_tokens, type_length = _short_tokens(mem_type)
        length = (
            NAME_WEIGHT * name_length
            + DESCRIPTION_WEIGHT * desc_length
            + PATH_WEIGHT * (dir_length + file_length)
            + TYPE_WEIGHT * type_length
            + BODY_WEIGHT * body_length
        )
        han_fields: tuple[tuple[str, float], ...] = ()
        if not (name.isascii() and description.isascii() and rel_path.isascii() and body.isascii()):
            han_fields = tuple(
                (text, weight)
                for text, weight in (
                    (texts[4 * n], NAME_WEIGHT),
                    (texts[4 * n + 1], DESCRIPTION_WEIGHT),
                    (_normalize(rel_path), PATH_WEIGHT),
                    (texts[4 * n + 3], BODY_WEIGHT),
                )
                if not text.isascii()
            )
        out.append(
            _Document(
                (name_tokens, desc_tokens, dir_tokens, file_tokens, type_tokens, body_tokens),
                length,
                f"{name}\n{description}\n{rel_path}",
                han_fields,
                not texts[4 * n + 3].isascii(),
            )
        )
    return out


# --- the tools rule --------------------------------------------------------------------------
_TOOL_ALIASES: Final = {"bash": ("bash", "shell"), "powershell": ("powershell", "shell")}
#: Claude Code's own tools, lower-cased: in use nearly every turn, whatever the task.
_GENERIC_TOOLS: Final = _words(
    """bash powershell read write edit multiedit notebookedit grep glob ls webfetch websearch
    task todowrite"""
)
#: Parts of MCP server names that say nothing about which system it is (mcp__claude_ai_Linear__x).
_GENERIC_SERVER_WORDS: Final = frozenset({"claud", "ai", "mcp", "server", "api", "local"})


@dataclass(frozen=True)
class _ToolMatcher:
    """A memory is about the tool when its name or file name has ``every`` and one of ``some``."""

    tool: str
    every: frozenset[str]
    some: frozenset[str]
    #: A general-purpose tool of the agent: its warnings get GENERIC_TOOL_BONUS, when matched.
    generic: bool = False

    def matches(self, doc: _Document) -> bool:
        if not self.every and not self.some:
            return False
        return self.every <= doc.name_tokens and (
            not self.some or bool(self.some & doc.name_tokens)
        )


def _tool_matcher(tool: str) -> _ToolMatcher:
    parts = [p for p in re.split(r"__+", tool.strip()) if p]
    if len(parts) >= 2 and parts[0].lower() == "mcp":
        # mcp__<server>__<tool>: a memory about the Linear *project* is not the Linear MCP's
        # doc, so the server's name must come with "mcp" or the tool's own name.
        server = frozenset(tokenize(parts[1].replace("_", " "))) - _GENERIC_SERVER_WORDS
        if not server:  # nothing distinctive to recognise its memories by
            return _ToolMatcher(tool, frozenset(), frozenset())
        rest = frozenset(tokenize(" ".join(parts[2:]).replace("_", " ")))
        return _ToolMatcher(tool, server, frozenset({"mcp"}) | rest)
    name = parts[0].lower() if parts else ""
    aliases = frozenset(t for alias in _TOOL_ALIASES.get(name, (name,)) for t in tokenize(alias))
    return _ToolMatcher(tool, frozenset(), aliases, name in _GENERIC_TOOLS)


def _drop_reason(doc: _Document, tools: Sequence[_ToolMatcher]) -> str | None:
    for matcher in tools:
        if not matcher.matches(doc):
            continue
        # Warnings, gotchas and known issues stay even for a tool in use (spec 6.4).
        if _is_warning(doc.name_tokens | doc.desc_tokens, doc.raw):
            return None
        return f"recently used tool '{matcher.tool}': plain usage doc"
    return None


def _tool_score(
    doc: _Document, tools: Sequence[_ToolMatcher], score: float, floor: float
) -> tuple[float, str, bool]:
    """A memory's ``score`` under the other half of spec 6.4's rule, the term saying why, and
    whether the rule alone selects it. A tool's warnings matter most while it is in use, and a
    next-step question ("looks fine, apply it") rarely names the tool: the warnings of a tool
    just used score at least ``TOOL_BONUS`` over the question's floor and pass the relative
    cuts. A general-purpose tool (Bash, Read) only adds ``GENERIC_TOOL_BONUS`` to a warning the
    question matched."""
    if score <= 0.0 and all(m.generic for m in tools):
        return score, "", False
    warning: bool | None = None
    best = (score, "", False)
    for matcher in tools:
        if not matcher.matches(doc):
            continue
        if warning is None:
            warning = _is_warning(doc.name_tokens | doc.desc_tokens, doc.raw)
        if not warning:
            return best
        term = f"{matcher.tool} (recently used)"
        if not matcher.generic:
            return round(score + floor + TOOL_BONUS, 6), term, True
        if score > 0.0 and not best[1]:
            best = (round(score + GENERIC_TOOL_BONUS, 6), term, False)
    return best


# --- public API ------------------------------------------------------------------------------
class ManifestItem(Protocol):
    """What the core's scan produces for each topic file (read-only attributes suffice); ``body``
    is the head :func:`memdir.agent.topic.with_bodies` reads (None or empty: none)."""

    @property
    def rel_path(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def type(self) -> str | None: ...
    @property
    def body(self) -> str | None: ...


@dataclass(frozen=True)
class LexicalMatch:
    rel_path: str
    #: Normalised score: 1.0 is every query concept matched once in an average-length memory.
    score: float
    #: The query terms that matched, shown to users as "why" (``部署→deploy`` for a translation).
    matched_terms: tuple[str, ...]
    #: Set when the recently-used-tools rule dropped this memory.
    dropped_reason: str | None = None


@dataclass(frozen=True)
class LexicalSelection:
    #: At most ``limit`` memories, best first.
    selected: tuple[LexicalMatch, ...]
    #: Every candidate scoring above 0, best first, including dropped ones (for diagnostics).
    considered: tuple[LexicalMatch, ...]
    #: The lowest normalised score a memory could be selected with for this query: its floor
    #: (``min_score``) and ``SHARED_CUT`` of what the question's own words gave the best file. A
    #: file that does not match the best file's strongest concept needed ``RELATIVE_CUT`` of the
    #: best score; a warning of a tool just used needs neither.
    threshold: float
    #: This query's own floor: ``MIN_SCORE`` lowered for a long question (``LENGTH_SLOPE``), not
    #: below ``MIN_FLOOR``; the threshold and the relative cut are never under it.
    min_score: float = MIN_SCORE
    #: Files that cleared the cuts but were left out because more than ``MAX_WORD_MATCHES`` files
    #: did on the question's words (only the best is kept then), best first.
    crowded: tuple[str, ...] = ()
    #: Files left out for matching the question only in their body, on fewer than
    #: ``BODY_ONLY_CONCEPTS`` of its concepts, best first.
    body_only: tuple[str, ...] = ()


def select_lexical(
    query: str,
    candidates: Sequence[ManifestItem],
    recent_tools: Sequence[str] = (),
    limit: int = 5,
) -> LexicalSelection:
    """Pick at most ``limit`` memories relevant to ``query`` from manifest entries, offline.

    Pure and deterministic: equal scores are ordered by ``rel_path``.
    """
    concepts = explain_query(query) if query.strip() else []
    if not concepts or not candidates:
        return LexicalSelection((), (), MIN_SCORE)
    docs = _documents(candidates)
    tools = [_tool_matcher(t) for t in dict.fromkeys(recent_tools) if t.strip()]
    hits, ceiling = _score_and_ceiling(concepts, docs)
    floor = _min_score(ceiling, len(docs))
    scored = []
    #: Warnings of a tool just used: selected on the tools rule alone.
    warned: set[str] = set()
    for item, doc, hit in zip(candidates, docs, hits, strict=True):
        score, terms = hit.score, hit.terms
        if tools:
            score, term, alone = _tool_score(doc, tools, score, floor)
            if term:
                terms = (*terms, term)
            if alone:
                warned.add(item.rel_path)
        if score > 0.0:
            scored.append((score, item.rel_path, terms, hit, doc))
    scored.sort(key=lambda s: (-s[0], s[1]))

    considered: list[LexicalMatch] = []
    kept: list[tuple[LexicalMatch, _Hit]] = []
    body_only: list[str] = []
    for score, rel_path, terms, hit, doc in scored:
        match = LexicalMatch(rel_path, score, terms, _drop_reason(doc, tools))
        considered.append(match)
        if match.dropped_reason is not None:
            continue
        if (
            len(hit.concepts) < BODY_ONLY_CONCEPTS
            and rel_path not in warned
            and doc.body
            and not any(_in_manifest(doc, concepts[i]) for i in hit.concepts)
        ):
            body_only.append(rel_path)
            continue
        kept.append((match, hit))
    if not kept:
        return LexicalSelection((), tuple(considered), floor, floor, (), tuple(body_only))
    best, best_hit = kept[0]
    own_cut = max(floor, round(RELATIVE_CUT * best.score, 6))
    # A second file on the best file's topic is measured against what the question's own words
    # gave the best file, not against a tool's warning raised by the tools rule.
    shared_cut = max(floor, round(SHARED_CUT * (best_hit.score or best.score), 6))
    passed = [
        match
        for match, hit in kept
        if match.score >= own_cut
        or (match.score >= shared_cut and best_hit.strongest in hit.concepts)
        or match.rel_path in warned
    ]
    # A question whose words clear the cuts for more than MAX_WORD_MATCHES files is too vague
    # ("review this PR") to trust any but its best file; files tying with it stay, nothing tells
    # them apart. A tool's warnings do not count.
    worded = [m for m in passed if m.rel_path not in warned]
    crowded = frozenset(
        m.rel_path
        for m in worded[1:]
        if len(worded) > MAX_WORD_MATCHES and m.score < worded[0].score
    )
    selected = tuple(m for m in passed if m.rel_path not in crowded)[: max(limit, 0)]
    return LexicalSelection(
        selected,
        tuple(considered),
        shared_cut,
        floor,
        tuple(m.rel_path for m in worded if m.rel_path in crowded),
        tuple(body_only),
    )


def _in_manifest(doc: _Document, concept: QueryConcept) -> bool:
    """Whether ``doc`` has ``concept`` in its name, description or path, not only its body."""
    return any(
        all(
            token in doc.manifest_keys or (len(token) == 1 and token in doc.manifest_han)
            for token in alt.tokens
        )
        for alt, _ in concept.alternatives
    )


@dataclass(frozen=True)
class _Hit:
    """How one document matched the query."""

    score: float  # normalised
    terms: tuple[str, ...]  # matched query terms, for LexicalMatch.matched_terms
    concepts: frozenset[int]  # indices of the matched query concepts
    strongest: int  # the concept giving this document most of its score (-1: none)


_NO_HIT: Final = _Hit(0.0, (), frozenset(), -1)
_NOTHING: Final = (0.0, "")


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _score(concepts: Sequence[QueryConcept], docs: Sequence[_Document]) -> list[_Hit]:
    """Normalised BM25F score, matched terms and matched concepts of every document."""
    return _score_and_ceiling(concepts, docs)[0]


def _min_score(ceiling: float, n_docs: int) -> float:
    """The score a memory needs for a query whose best possible score is ``ceiling``."""
    words = ceiling / _idf(n_docs, 1) if n_docs else 1.0
    return round(max(MIN_FLOOR, MIN_SCORE - LENGTH_SLOPE * math.log(max(words, 1.0))), 6)


def _score_and_ceiling(
    concepts: Sequence[QueryConcept], docs: Sequence[_Document]
) -> tuple[list[_Hit], float]:
    """:func:`_score` and the query's best possible score (its normaliser)."""
    n_docs = len(docs)
    # fsum: exactly rounded, so the order of the candidates cannot change a score by an ulp.
    avg_length = math.fsum(d.length for d in docs) / n_docs or 1.0
    query_tokens = frozenset(t for c in concepts for alt, _ in c.alternatives for t in alt.tokens)
    singles = [t for t in query_tokens if len(t) == 1 and _is_han(t)]
    # Postings of the query's tokens: token -> {document: saturated frequency}. Built from a
    # set intersection per document (in C), so a concept's alternatives then walk only the
    # documents that hold them.
    postings: dict[str, dict[int, float]] = {}
    k1_plus = K1 + 1.0
    for i, doc in enumerate(docs):
        shared = doc.keys & query_tokens
        if singles and doc.han_text:
            shared |= {char for char in singles if char in doc.han_text}
        if not shared:
            continue
        norm = K1 * (1.0 - B + B * doc.length / avg_length)
        for token in shared:
            tf = doc.tf(token) if len(token) > 1 or not _is_han(token) else doc.char_tf(token)
            postings.setdefault(token, {})[i] = tf * k1_plus / (tf + norm)

    # By document, for the documents matching anything: most match nothing.
    why: dict[int, list[str]] = {}
    parts: dict[int, dict[int, float]] = {}
    ceiling = 0.0
    for index, concept in enumerate(concepts):
        found: dict[int, tuple[float, str]] = {}
        for alt, weight in concept.alternatives:
            lists = [postings[t] for t in alt.tokens if t in postings]
            if not lists or len(lists) < len(alt.tokens):
                continue
            label = concept.surface if weight == 1.0 else f"{concept.surface}→{alt.surface}"
            matches: Iterable[tuple[int, float]] = lists[0].items()
            if len(lists) > 1:
                # A phrase counts only whole ("merge request" is not "merge"), as its mean.
                matches = (
                    (i, sum(posting[i] for posting in lists) / len(lists))
                    for i in lists[0]
                    if all(i in posting for posting in lists)
                )
            for i, sat in matches:
                part = weight * sat
                # A phrase scoring what its words score ((x + x) / 2 against x) is a tie, kept
                # by the earlier alternative whatever the last bit of the float says.
                if part > found.get(i, _NOTHING)[0] + 1e-12:
                    found[i] = (part, label)
        hits = sorted(found.items())
        # One idf per concept, from the files matching any of its alternatives: a rare
        # translation must not outscore the word the user typed. A concept matching nothing is
        # charged as a rare word, so unmatched content words lower every file's score.
        idf = _idf(n_docs, len(hits)) if hits else concept.charge * _idf(n_docs, 1)
        ceiling += concept.weight * idf
        for i, (best, label) in hits:
            parts.setdefault(i, {})[index] = concept.weight * idf * best
            why.setdefault(i, []).append(label)
    out = [_NO_HIT] * n_docs
    if ceiling <= 0.0:
        return out, ceiling
    for i, doc_parts in parts.items():
        out[i] = _Hit(
            round(sum(doc_parts.values()) / ceiling, 6),
            tuple(_merge(why[i])),
            frozenset(doc_parts),
            # Ties go to the earlier concept, so the choice is deterministic.
            max(doc_parts, key=lambda k: (doc_parts[k], -k)),
        )
    return out, ceiling


def _merge(terms: list[str]) -> list[str]:
    """Join overlapping matched bigrams into the phrase the user typed: 监控, 控看 -> 监控看."""
    out: list[str] = []
    for term in terms:
        if (
            out
            and len(term) == 2
            and len(out[-1]) >= 2
            and _is_han(term[0])
            and _is_han(out[-1][-1])
            and out[-1][-1] == term[0]
        ):
            out[-1] += term[1]
        else:
            out.append(term)
    return list(dict.fromkeys(out))
