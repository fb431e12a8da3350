"""Offline lexical memory selector: path B's "pick at most 5 relevant files" without a model.

The agent's selector is a side model reading the manifest (spec section 6). Without an API key
memdir still has to pick files, offline, deterministically and fast, for bilingual users. This
module does it from what the manifest shows (name, description, type, path), never the bodies,
and unlike the agent it has no "single word" skip rule, so Chinese and Japanese questions, which
contain no spaces, are handled like any other.

Tokens
    Text is lower-cased (NFKC only where it matters: full-width Latin, half-width katakana) and
    cut into script runs. Latin runs become words, minus a small stop list, stemmed with Snowball
    English (PyStemmer, imported on first use). Han runs are cut at function words (的, 什么,
    怎么, ...) and indexed as overlapping character bigrams; a query's one-character word (坑) is
    counted in the text directly. Katakana runs are loanwords and stay whole; hiragana is mostly
    particles and is dropped. "ruff的配置" gives ``ruff`` and ``配置``. Common traditional and
    Japanese character forms are folded to simplified ones (東京/东京, 翻訳/翻译).

Why bigrams, not jieba
    Measured on the benchmark with the same scorer: jieba costs ~0.9-1.8 s of dictionary load in
    every new process and made cold selection 2x slower, and it was worse: Chinese precision 0.68
    vs 0.75, unrelated Chinese questions rejected 73% vs 100%. Developer words (值班, 看板, 预发)
    are cut differently in question and description by a dictionary; bigrams always agree.

Why our own BM25
    bm25s imports numpy/scipy (~150 ms) and builds a sparse index per call (~4.6 ms for 200
    documents before any tokenising); rank-bm25 is unmaintained. Neither does field weights or
    "any of these translations" query terms, and the manifest changes every turn, so there is no
    index to keep. The scorer below is a few dozen lines over the ~20 distinct query tokens.

Scoring
    BM25F: field term counts are weighted (name 2, description 1, path 0.5, type 0.3) into one
    pseudo-document, then saturated (k1 1.2, b 0.5: the fields are one-liners). A query is a list
    of *concepts*. A word in the bilingual synonym table (部署/deploy/デプロイ, 测试/test, ...) is
    one concept whose alternatives are all its translations, scored by the best one
    (translations count 0.9), with one idf for the concept: expanding a query never counts an
    idea twice and a rare translation never outweighs the word typed. Generic request words
    (add, write, fix, run) and lone Han characters weigh 0.3; n-character Han pieces weigh like
    the n/2 words they hold, not like their n-1 bigrams.

Threshold
    Scores are normalised by the best the query could score (1.0: every concept matched once in
    an average-length memory; a concept no memory has is charged 0.7 of a rare word's idf), which
    keeps them comparable across queries and directory sizes. A file is selected with a score of
    at least ``MIN_SCORE`` (0.4) and at least ``RELATIVE_CUT`` (0.7) of the best file's score,
    or ``SHARED_CUT`` (0.55) of it when it matches the concept that gives the best file most of
    its score: a second file on the question's topic ("rollback" in a runbook as well as in the
    rollback memory) is kept, a file sharing only a side word ("release", "PR") is not. On the
    held-out queries (test, fresh, fresh2) this gives 0.87 / 0.79 where the single cut of 0.6
    gave 0.84 / 0.76 and a single cut of 0.65 0.83 / 0.78; a score-gap cut and blending in the
    share of query concepts matched did not beat the plain cut. The rule was kept for its
    held-out gain, its two cuts chosen on the dev split.

Recently used tools (spec 6.4)
    A memory is about a tool when the tool's name is in the memory's name or file name (for
    ``mcp__server__tool``: the server's distinctive name plus "mcp" or the tool's name, so a
    memory about the Linear *project* is not the Linear MCP's doc). It is dropped as plain usage
    documentation unless its name, description or path carries a warning word (gotcha, pitfall,
    caveat, known issue, never, avoid, 注意, 坑, 不要, 已知问题, 落とし穴, ...). Dropped memories
    stay in ``considered`` with a ``dropped_reason``.

Measured (``benchmarks/recall_eval.py``: 63 memories, 220 queries, 41 unrelated; 2 shared cores)
    recall / precision: all 0.90 / 0.77, English 0.88 / 0.72, Chinese 0.87 / 0.78, mixed
    0.98 / 0.82, Japanese 0.93 / 0.82; dev split 0.93 / 0.74, held-out 0.80 / 0.74, queries
    written after the first tuning 0.91 / 0.78, queries written before the second round was
    scored ("fresh2") 0.94 / 0.87. Unrelated questions selecting nothing: 37 of 41. Plain
    whitespace BM25: 0.29 / 0.14, no Chinese recall, every unrelated English question selects
    something. Without the synonym table cross-language recall falls from 0.82 to 0.36.
    Time for 200 candidates: ~0.5-0.8 ms once the documents are cached (keyed by content, so
    only new or edited memories are tokenised again). The first call in a process, over 200
    unseen memories, builds the synonym table (~3 ms, was ~5 ms: CJK synonyms are found by
    dictionary lookups instead of a ~300-way regex whose compilation dominated) and tokenises
    every document (~6-7 ms), so it is still ~10 ms or a little more (best of 40 on a machine
    with load 7 on 2 cores). Import: a few ms; PyStemmer (~1 ms) loads on first use. Stemming
    is ~1 us a word, so batching it with ``stemWords`` gains nothing measurable.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Protocol

__all__ = [
    "MIN_SCORE",
    "RELATIVE_CUT",
    "LexicalMatch",
    "LexicalSelection",
    "ManifestItem",
    "select_lexical",
    "tokenize",
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
#: A translation or synonym counts this much of the word the user actually typed.
SYNONYM_WEIGHT: Final = 0.9
#: Minimum normalised score (share of the query's best possible score) to be selected.
MIN_SCORE: Final = 0.4
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
    lot really sure whether either neither via per etc e g ie eg"""
)
#: Words that say what to do rather than what about ("write integration tests", "add type
#: hints"): kept, but at WEAK_WEIGHT, so neither their matches nor their absence decide much.
_EN_WEAK: Final = _words(
    """add write put fix run call make create update change show find keep set start check see
    send last next new old current good best bad better big small stuff work works working today
    person someone anyone actually maybe possible able time use using used"""
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
    def stemWord(self, word: str) -> str: ...  # noqa: N802 (PyStemmer's name)


@lru_cache(maxsize=1)
def _stemmer() -> _StemmerLike:
    # Imported lazily: the selector must not cost anything until it is used.
    import Stemmer  # type: ignore[import-not-found,unused-ignore]  # PyStemmer ships no stubs

    stemmer: _StemmerLike = Stemmer.Stemmer("english")
    return stemmer


_VOWELS = frozenset("aeiouy")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # Snowball keeps the "s" of vowel-less plurals: PRs, MRs and SLAs would never meet PR.
    if len(word) > 2 and word.endswith("s") and word.isascii() and not _VOWELS & set(word[:-1]):
        word = word[:-1]
    return _stemmer().stemWord(word)


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
    覚觉 覺觉 學学 稱称 闘斗 鬥斗 鬪斗 戦战 戰战
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


def _pieces(text: str) -> list[tuple[str, str]]:
    """Units of normalised text as ``(kind, text)``: a Latin word ("word"), a katakana word
    ("kata") or a Han piece free of function words ("han"). Hiragana (particles) is dropped."""
    out: list[tuple[str, str]] = []
    if text.isascii():
        # Fast path for the common all-English description.
        for run in _ASCII_WORDS.findall(text):
            if run not in _EN_STOP and (len(run) > 1 or run.isdigit()):
                out.append(("word", run))
        return out
    # Function words are Han-only strings, so one pass over the whole text cuts every Han run.
    for match in _RUNS.finditer(_ZH_STOP_RE.sub(" ", text)):
        kind = match.lastgroup
        run = match.group()
        if kind == "word":
            if run not in _EN_STOP and (len(run) > 1 or run.isdigit()):
                out.append(("word", run))
        elif kind == "kata" or kind == "han":
            out.append((kind, run))
    return out


def _index_tokens(text: str) -> tuple[list[str], float]:
    """Document tokens of ``text`` and its length in words.

    A Chinese word is ~2 characters, so a bigram counts as half a word: a Chinese description
    is not "longer" than the English one saying the same. Single characters inside longer
    pieces are not indexed; :func:`_score` counts them in the text when a query has one.
    """
    return _index_normalized(_normalize(text))


def _index_normalized(text: str) -> tuple[list[str], float]:
    tokens: list[str] = []
    length = 0.0
    for kind, piece in _pieces(text):
        if kind == "word":
            tokens.append(_stem(piece))
            length += 1.0
        elif kind == "kata":
            tokens.append(piece)
            length += 1.0
        else:
            grams = _bigrams(piece)
            tokens.extend(grams)
            length += 0.5 * len(grams)
    return tokens, length


#: Directories and types repeat across files: tokenise each once.
_short_tokens = lru_cache(maxsize=512)(_index_tokens)


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
#: Common developer vocabulary in English, Chinese and Japanese. Each line is one idea; a word on
#: several lines (发布 is both "release" and "deploy") expands to all of them. Kept small and
#: generic on purpose: it bridges languages, it is not a thesaurus of this project's jargon.
_SYNONYM_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("test", "tests", "testing", "测试", "单测", "テスト"),
    ("unit test", "单元测试", "单测", "ユニットテスト"),
    ("integration test", "集成测试", "結合テスト"),
    ("deploy", "deployment", "ship", "rollout", "部署", "上线", "发布", "デプロイ"),
    ("release", "ship", "发布", "发版", "リリース"),
    ("production", "prod", "生产", "线上", "本番"),
    ("staging", "预发", "预发布", "ステージング"),
    ("rollback", "roll back", "revert", "回滚", "回退", "ロールバック"),
    ("database", "db", "postgres", "数据库", "データベース"),
    ("migration", "migrate", "迁移", "マイグレーション"),
    ("config", "configuration", "configure", "settings", "配置", "设置", "設定"),
    ("preference", "prefer", "偏好", "喜好", "好み"),
    ("monitoring", "monitor", "dashboard", "监控", "看板", "監視", "ダッシュボード"),
    ("alert", "alerting", "告警", "报警", "アラート"),
    ("review", "code review", "审查", "评审", "审核", "レビュー"),
    ("branch", "分支", "ブランチ"),
    ("merge", "合并", "合入", "マージ"),
    ("freeze", "frozen", "冻结", "封版", "フリーズ"),
    ("commit", "提交", "コミット"),
    ("commit message", "提交信息", "提交说明", "コミットメッセージ"),
    ("pull request", "pr", "merge request", "mr", "合并请求", "プルリク"),
    ("push", "推送", "推到", "推上去", "プッシュ"),
    ("log", "logging", "日志", "ログ"),
    ("error", "exception", "报错", "错误", "异常", "エラー", "例外"),
    ("bug", "缺陷", "バグ"),
    ("issue", "ticket", "工单", "チケット"),
    ("performance", "perf", "性能", "パフォーマンス"),
    ("latency", "延迟", "时延", "レイテンシ"),
    ("security", "安全", "セキュリティ"),
    ("secret", "api key", "credential", "密钥", "秘钥", "凭证", "シークレット"),
    ("password", "密码", "パスワード"),
    ("documentation", "docs", "doc", "文档", "ドキュメント"),
    ("design doc", "rfc", "设计文档", "設計書"),
    ("build", "构建", "ビルド"),
    ("dependency", "library", "package", "依赖", "第三方库", "依存"),
    ("lint", "linter", "代码检查", "静态检查"),
    ("format", "formatter", "格式化", "フォーマット"),
    ("type check", "type hints", "typing", "类型检查", "类型注解", "型チェック"),
    ("api", "endpoint", "接口", "エンドポイント"),
    ("cache", "缓存", "キャッシュ"),
    ("session", "会话", "セッション"),
    ("login", "auth", "authentication", "登录", "认证", "鉴权", "ログイン", "認証"),
    ("payment", "支付", "付款", "決済"),
    ("checkout", "结账", "结算", "チェックアウト"),
    ("search", "搜索", "检索", "検索"),
    ("queue", "队列", "キュー"),
    ("feature flag", "feature toggle", "特性开关", "功能开关", "开关", "フィーチャーフラグ"),
    ("meeting", "sync", "standup", "会议", "例会", "站会", "会議", "ミーティング"),
    ("on call", "oncall", "值班", "オンコール", "当番"),
    ("incident", "outage", "事故", "故障", "宕机", "挂了", "出问题", "障害"),
    ("runbook", "playbook", "手册", "操作手册", "手順書"),
    ("comment", "注释", "コメント"),
    ("summary", "recap", "总结", "摘要"),
    ("style", "风格", "写法", "スタイル", "書き方"),
    ("naming", "命名"),
    ("frontend", "前端", "フロントエンド"),
    ("backend", "后端", "バックエンド"),
    ("mobile", "app", "移动端", "手机", "アプリ", "モバイル"),
    ("server", "服务器", "サーバー"),
    ("version", "版本", "バージョン"),
    ("upgrade", "升级", "アップグレード"),
    ("install", "安装", "インストール"),
    ("container", "docker", "容器", "コンテナ"),
    ("timezone", "time zone", "时区", "タイムゾーン"),
    ("translation", "translate", "i18n", "翻译", "本地化", "翻訳"),
    ("english", "英文", "英语", "英語"),
    ("chinese", "中文", "汉语", "中国語"),
    ("japanese", "日文", "日语", "日本語"),
    ("retention", "retain", "保留", "保存期間"),
    ("delete", "remove", "删除", "清理", "削除"),
    ("backup", "备份", "バックアップ"),
    ("permission", "权限", "権限"),
    ("customer", "client", "客户", "顧客"),
    ("team", "团队", "チーム"),
    ("contract", "合同", "契約"),
    ("data", "数据", "データ"),
    ("storage", "store", "存储", "ストレージ"),
    ("region", "区域", "地域", "机房", "リージョン"),
    ("parallel", "concurrent", "并行", "并发", "並列"),
    ("flaky", "intermittent", "偶发", "不稳定"),
    ("fail", "failure", "失败", "失敗"),
    ("timeout", "超时", "タイムアウト"),
    ("refactor", "重构", "リファクタリング"),
    ("mock", "模拟", "モック"),
    ("local", "本地", "ローカル"),
    ("environment", "env", "环境", "環境"),
    ("template", "模板", "テンプレート"),
    ("draft", "草稿", "下書き"),
    ("remote", "远程", "リモート"),
    ("gotcha", "pitfall", "caveat", "warning", "坑", "陷阱", "注意", "警告", "落とし穴"),
    ("known issue", "已知问题", "既知の問題"),
    ("usage", "用法", "使用方法", "使い方"),
    ("convention", "guideline", "规范", "约定", "规则", "規約"),
    ("count", "统计", "数量", "件数"),
    ("deadline", "截止", "期限", "締め切り"),
    ("cost", "budget", "成本", "预算", "コスト", "予算"),
    ("email", "mail", "邮件", "メール"),
    ("retry", "重试", "リトライ"),
    ("code", "代码", "コード"),
    ("editor", "ide", "编辑器", "エディタ"),
    ("design", "设计", "設計", "デザイン"),
    ("pipeline", "ci", "持续集成", "流水线", "パイプライン"),
    ("benchmark", "基准测试", "压测", "ベンチマーク"),
    ("status", "进度", "状态", "ステータス"),
    ("report", "报告", "周报", "レポート"),
    ("explain", "explanation", "解释", "讲解", "説明"),
    ("short", "concise", "terse", "简短", "简洁"),
    ("detail", "详细", "细节", "詳細"),
    ("monday", "周一", "星期一", "月曜"),
    ("tuesday", "周二", "星期二", "火曜"),
    ("wednesday", "周三", "星期三", "水曜"),
    ("thursday", "周四", "星期四", "木曜"),
    ("friday", "周五", "星期五", "金曜"),
    ("morning", "上午", "午前"),
    ("afternoon", "下午", "午後"),
)


@dataclass(frozen=True)
class _Alternative:
    tokens: tuple[str, ...]  # matched as a phrase: the mean of its tokens' scores
    surface: str


@dataclass(frozen=True)
class _SynonymTable:
    #: stemmed Latin phrase -> alternatives of every group containing it
    latin: dict[tuple[str, ...], tuple[_Alternative, ...]]
    #: CJK or katakana surface -> alternatives
    cjk: dict[str, tuple[_Alternative, ...]]
    #: Lengths of the CJK surfaces, longest first, and the characters they start with: the
    #: query is scanned with dictionary lookups (a ~300-way regex alternation costs several
    #: milliseconds to compile on the first call, the scan microseconds per query).
    cjk_lengths: tuple[int, ...]
    cjk_first: frozenset[str]
    max_latin_len: int


def _surface_tokens(surface: str) -> tuple[str, ...]:
    """How a synonym surface appears among document tokens: stems, a katakana word, bigrams."""
    tokens: list[str] = []
    for kind, piece in _pieces(_normalize(surface)):
        if kind == "word":
            tokens.append(_stem(piece))
        elif kind == "kata":
            tokens.append(piece)
        else:
            tokens.extend(_bigrams(piece))
    return tuple(tokens)


def _latin_key(surface: str) -> tuple[str, ...] | None:
    words = re.findall(r"[^\W_]+", _normalize(surface))
    if not words or not all(w.isascii() for w in words):
        return None
    # Stop words stay in the key ("on call"): the query side matches before dropping them.
    return tuple(_stem(w) for w in words)


@lru_cache(maxsize=1)
def _synonyms() -> _SynonymTable:
    # Insertion-ordered dicts as ordered sets: a word on several lines gets every line's words.
    by_surface: dict[str, dict[_Alternative, None]] = {}
    for group in _SYNONYM_GROUPS:
        line = dict.fromkeys(a for s in group if (a := _Alternative(_surface_tokens(s), s)).tokens)
        for surface in group:
            by_surface.setdefault(_normalize(surface), {}).update(line)
    by_key: dict[tuple[str, ...], dict[_Alternative, None]] = {}
    cjk: dict[str, tuple[_Alternative, ...]] = {}
    for surface, merged in by_surface.items():
        key = _latin_key(surface)
        if key is not None:
            by_key.setdefault(key, {}).update(merged)
        else:
            cjk[surface] = tuple(merged)
    latin = {key: tuple(alternatives) for key, alternatives in by_key.items()}
    return _SynonymTable(
        latin,
        cjk,
        tuple(sorted({len(s) for s in cjk}, reverse=True)),
        frozenset(s[0] for s in cjk),
        max((len(k) for k in latin), default=1),
    )


# --- the query -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Concept:
    """One idea of the query: matched by its best alternative."""

    surface: str  # what the user typed, shown in matched_terms
    alternatives: tuple[tuple[_Alternative, float], ...]  # with the weight of each
    weight: float  # share of a "word" this concept stands for


def _word_concepts(words: list[str]) -> list[_Concept]:
    table = _synonyms()
    stems = [_stem(w) for w in words]
    concepts: list[_Concept] = []
    i = 0
    while i < len(words):
        for size in range(min(table.max_latin_len, len(words) - i), 0, -1):
            key = tuple(stems[i : i + size])
            alternatives = table.latin.get(key)
            if alternatives is not None:
                surface = " ".join(words[i : i + size])
                concepts.append(_synonym_concept(surface, key, alternatives))
                i += size
                break
        else:
            if words[i] not in _EN_STOP:
                alt = _Alternative((stems[i],), words[i])
                weight = WEAK_WEIGHT if words[i] in _EN_WEAK else 1.0
                concepts.append(_Concept(words[i], ((alt, 1.0),), weight))
            i += 1
    return concepts


def _synonym_concept(
    surface: str, typed: tuple[str, ...], alternatives: tuple[_Alternative, ...]
) -> _Concept:
    weighted = tuple((alt, 1.0 if alt.tokens == typed else SYNONYM_WEIGHT) for alt in alternatives)
    if not any(weight == 1.0 for _, weight in weighted):
        weighted = ((_Alternative(typed, surface), 1.0), *weighted)
    return _Concept(surface, weighted, 1.0)


def _han_concepts(piece: str) -> list[_Concept]:
    grams = _bigrams(piece)
    if len(piece) == 1:
        # A lone character (写, 看, 用) is more often a verb of the question than its topic.
        weight = UNIGRAM_WEIGHT
    else:
        # n characters hold about n/2 words but give n-1 overlapping bigrams, many spanning a
        # word boundary; weight them so a Chinese phrase weighs what the same English one would.
        weight = (len(piece) / 2) / len(grams) if len(grams) > 1 else 1.0
    return [_Concept(g, ((_Alternative((g,), g), 1.0),), weight) for g in grams]


def _query_concepts(query: str) -> list[_Concept]:
    text = _normalize(query)
    table = _synonyms()
    concepts: list[_Concept] = []
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
            alt = _Alternative((run,), run)
            concepts.append(_Concept(run, ((alt, 1.0),), 1.0))
        elif kind == "han":
            for piece in _ZH_STOP_RE.split(run):
                if piece:
                    concepts.extend(_han_concepts(piece))
    concepts.extend(_word_concepts(words))
    return _dedupe(concepts)


def _take_cjk_synonyms(text: str, table: _SynonymTable, concepts: list[_Concept]) -> str:
    """Append a concept for each CJK synonym surface in ``text``, scanning left to right and
    taking the longest surface at each position; return ``text`` with those spans blanked."""
    kept: list[str] = []
    start = i = 0
    while i < len(text):
        if text[i] in table.cjk_first:
            for size in table.cjk_lengths:
                surface = text[i : i + size]
                alternatives = table.cjk.get(surface) if len(surface) == size else None
                if alternatives is not None:
                    typed = _surface_tokens(surface)
                    concepts.append(_synonym_concept(surface, typed, alternatives))
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


def _dedupe(concepts: list[_Concept]) -> list[_Concept]:
    # "test ... testing", 值班 twice or 监控看板 (one synonym group) is one idea; counting it
    # twice would let it dominate the score.
    seen: set[frozenset[tuple[str, ...]]] = set()
    out: list[_Concept] = []
    for concept in concepts:
        key = frozenset(alt.tokens for alt, _ in concept.alternatives)
        if key not in seen:
            seen.add(key)
            out.append(concept)
    return out


# --- documents -------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Document:
    tf: dict[str, float]  # field-weighted term frequency
    length: float
    name_tokens: frozenset[str]  # for the tools rule: name and file name
    desc_tokens: frozenset[str]
    raw: str  # name, description and path as written, for the warning words
    #: Normalised text and weight of each field holding Han characters, for one-character terms.
    han_fields: tuple[tuple[str, float], ...]


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


@lru_cache(maxsize=4096)
def _document(rel_path: str, name: str, description: str, mem_type: str) -> _Document:
    directory, _, file_name = rel_path.rpartition("/")
    name_text, desc_text = _normalize(name), _normalize(description)
    name_tokens, name_length = _index_normalized(name_text)
    desc_tokens, desc_length = _index_normalized(desc_text)
    file_tokens, file_length = _index_tokens(_path_text(file_name))
    dir_tokens, dir_length = _short_tokens(_path_text(directory))
    type_tokens, type_length = _short_tokens(mem_type)
    tf: dict[str, float] = {}
    for tokens, weight in (
        (name_tokens, NAME_WEIGHT),
        (desc_tokens, DESCRIPTION_WEIGHT),
        (dir_tokens, PATH_WEIGHT),
        (file_tokens, PATH_WEIGHT),
        (type_tokens, TYPE_WEIGHT),
    ):
        for token in tokens:
            tf[token] = tf.get(token, 0.0) + weight
    length = (
        NAME_WEIGHT * name_length
        + DESCRIPTION_WEIGHT * desc_length
        + PATH_WEIGHT * (dir_length + file_length)
        + TYPE_WEIGHT * type_length
    )
    han_fields = tuple(
        (text, weight)
        for text, weight in (
            (name_text, NAME_WEIGHT),
            (desc_text, DESCRIPTION_WEIGHT),
            (_normalize(rel_path), PATH_WEIGHT),
        )
        if not text.isascii()
    )
    return _Document(
        tf=tf,
        length=length,
        name_tokens=frozenset(name_tokens) | frozenset(file_tokens),
        desc_tokens=frozenset(desc_tokens),
        raw=f"{name}\n{description}\n{rel_path}",
        han_fields=han_fields,
    )


# --- the tools rule --------------------------------------------------------------------------
_TOOL_ALIASES: Final = {"bash": ("bash", "shell"), "powershell": ("powershell", "shell")}
#: Parts of MCP server names that say nothing about which system it is (mcp__claude_ai_Linear__x).
_GENERIC_SERVER_WORDS: Final = frozenset({"claud", "ai", "mcp", "server", "api", "local"})


@dataclass(frozen=True)
class _ToolMatcher:
    """A memory is about the tool when its name or file name has ``every`` and one of ``some``."""

    tool: str
    every: frozenset[str]
    some: frozenset[str]

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
    return _ToolMatcher(tool, frozenset(), aliases)


def _drop_reason(doc: _Document, tools: Sequence[_ToolMatcher]) -> str | None:
    for matcher in tools:
        if not matcher.matches(doc):
            continue
        # Warnings, gotchas and known issues stay even for a tool in use (spec 6.4).
        if _is_warning(doc.name_tokens | doc.desc_tokens, doc.raw):
            return None
        return f"recently used tool '{matcher.tool}': plain usage doc"
    return None


# --- public API ------------------------------------------------------------------------------
class ManifestItem(Protocol):
    """What the core's scan produces for each topic file (read-only attributes suffice)."""

    @property
    def rel_path(self) -> str: ...
    @property
    def name(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...
    @property
    def type(self) -> str | None: ...


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
    #: The lowest normalised score a memory could be selected with for this query: ``MIN_SCORE``
    #: and ``SHARED_CUT`` of the best file's score. A file that does not match the best file's
    #: strongest concept needed ``RELATIVE_CUT`` of the best score.
    threshold: float


def select_lexical(
    query: str,
    candidates: Sequence[ManifestItem],
    recent_tools: Sequence[str] = (),
    limit: int = 5,
) -> LexicalSelection:
    """Pick at most ``limit`` memories relevant to ``query`` from manifest entries, offline.

    Pure and deterministic: equal scores are ordered by ``rel_path``.
    """
    concepts = _query_concepts(query) if query.strip() else []
    if not concepts or not candidates:
        return LexicalSelection((), (), MIN_SCORE)
    docs = [
        _document(c.rel_path, c.name or "", c.description or "", c.type or "") for c in candidates
    ]
    scored = [
        (hit.score, item.rel_path, hit, doc)
        for item, doc, hit in zip(candidates, docs, _score(concepts, docs), strict=True)
        if hit.score > 0.0
    ]
    scored.sort(key=lambda s: (-s[0], s[1]))

    tools = [_tool_matcher(t) for t in dict.fromkeys(recent_tools) if t.strip()]
    considered: list[LexicalMatch] = []
    kept: list[tuple[LexicalMatch, _Hit]] = []
    for score, rel_path, hit, doc in scored:
        match = LexicalMatch(rel_path, score, hit.terms, _drop_reason(doc, tools))
        considered.append(match)
        if match.dropped_reason is None:
            kept.append((match, hit))
    if not kept:
        return LexicalSelection((), tuple(considered), MIN_SCORE)
    best, best_hit = kept[0]
    own_cut = max(MIN_SCORE, round(RELATIVE_CUT * best.score, 6))
    shared_cut = max(MIN_SCORE, round(SHARED_CUT * best.score, 6))
    selected = tuple(
        match
        for match, hit in kept
        if match.score >= own_cut
        or (match.score >= shared_cut and best_hit.strongest in hit.concepts)
    )[: max(limit, 0)]
    return LexicalSelection(selected, tuple(considered), shared_cut)


@dataclass(frozen=True)
class _Hit:
    """How one document matched the query."""

    score: float  # normalised
    terms: tuple[str, ...]  # matched query terms, for LexicalMatch.matched_terms
    concepts: frozenset[int]  # indices of the matched query concepts
    strongest: int  # the concept giving this document most of its score (-1: none)


_NO_HIT: Final = _Hit(0.0, (), frozenset(), -1)


def _idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def _score(concepts: Sequence[_Concept], docs: Sequence[_Document]) -> list[_Hit]:
    """Normalised BM25F score, matched terms and matched concepts of every document."""
    n_docs = len(docs)
    avg_length = sum(d.length for d in docs) / n_docs or 1.0
    query_tokens = frozenset(t for c in concepts for alt, _ in c.alternatives for t in alt.tokens)
    singles = [t for t in query_tokens if len(t) == 1 and _is_han(t)]
    present: list[tuple[int, set[str], dict[str, float]]] = []
    for i, doc in enumerate(docs):
        # Set intersection in C first: most documents share no token with the query.
        tokens = doc.tf.keys() & query_tokens
        tf = doc.tf
        if singles and doc.han_fields:
            counts = {
                char: n
                for char in singles
                if (n := sum(w * text.count(char) for text, w in doc.han_fields))
            }
            if counts:
                tf = {**doc.tf, **counts}
                tokens |= counts.keys()
        if tokens:
            present.append((i, tokens, tf))
    norms = {i: K1 * (1.0 - B + B * docs[i].length / avg_length) for i, _, _ in present}

    totals = [0.0] * n_docs
    why: list[list[str]] = [[] for _ in range(n_docs)]
    parts: list[dict[int, float]] = [{} for _ in range(n_docs)]
    ceiling = 0.0
    for index, concept in enumerate(concepts):
        hits: list[tuple[int, float, str]] = []
        for i, tokens, tf in present:
            best, label = 0.0, ""
            for alt, weight in concept.alternatives:
                # A phrase counts only whole: "merge request" is not "merge".
                if not all(t in tokens for t in alt.tokens):
                    continue
                sat = sum(tf[t] * (K1 + 1.0) / (tf[t] + norms[i]) for t in alt.tokens)
                part = weight * sat / len(alt.tokens)
                if part > best:
                    best = part
                    label = concept.surface if weight == 1.0 else f"{concept.surface}→{alt.surface}"
            if best > 0.0:
                hits.append((i, best, label))
        # One idf per concept, from the files matching any of its alternatives: a rare
        # translation must not outscore the word the user typed. A concept matching nothing is
        # charged as a rare word, so unmatched content words lower every file's score.
        idf = _idf(n_docs, len(hits)) if hits else UNMATCHED_CHARGE * _idf(n_docs, 1)
        ceiling += concept.weight * idf
        for i, best, label in hits:
            part = concept.weight * idf * best
            totals[i] += part
            parts[i][index] = part
            why[i].append(label)
    if ceiling <= 0.0:
        return [_NO_HIT] * n_docs
    return [
        _Hit(
            round(totals[i] / ceiling, 6),
            tuple(_merge(why[i])),
            frozenset(parts[i]),
            # Ties go to the earlier concept, so the choice is deterministic.
            max(parts[i], key=lambda k: (parts[i][k], -k)),
        )
        if parts[i]
        else _NO_HIT
        for i in range(n_docs)
    ]


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
