"""When path B prefetches: the agent's single-word rule, and memdir's multilingual fix.

The agent skips messages without whitespace, and so almost every Chinese, Japanese or Thai
question; the ``multilingual`` rule also triggers on enough characters of such scripts, while
acknowledgements stay skipped in every language.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

TriggerRule = Literal["multilingual", "claude-code"]
TRIGGER_RULES: tuple[TriggerRule, ...] = ("multilingual", "claude-code")

#: Unicode ranges of scripts written without spaces between words, and how many characters of
#: each make a message more than one word (a Chinese question needs only a few characters; a
#: single Thai word is often six or more).
_SCRIPTS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("han", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]"), 4),
    ("kana", re.compile(r"[\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f]"), 5),
    ("thai-lao-khmer-myanmar", re.compile(r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]"), 10),
)
#: A word of another script next to a few no-space characters ("ruff的配置") is a phrase.
_MIXED_MIN_NO_SPACE = 2
_MIXED_MIN_OTHER = 2
#: Acknowledgements that are a whole message on their own: never worth a prefetch.
_ACKNOWLEDGEMENTS = frozenset(
    {
        "好",
        "好的",
        "好啊",
        "行",
        "可以",
        "继续",
        "繼續",
        "谢谢",
        "謝謝",
        "多谢",
        "收到",
        "了解",
        "明白",
        "知道了",
        "嗯",
        "嗯嗯",
        "对",
        "對",
        "是的",
        "没问题",
        "沒問題",
        "不用了",
        "算了",
        "开始吧",
        "继续吧",
        "请继续",
        "はい",
        "いいえ",
        "ありがとう",
        "ありがとうございます",
        "了解です",
        "続けて",
        "続けてください",
        "お願いします",
        "よろしく",
        "わかりました",
        "ครับ",
        "ค่ะ",
        "ขอบคุณ",
        "ขอบคุณครับ",
        "ขอบคุณค่ะ",
        "ตกลง",
    }
)
_PUNCTUATION = re.compile(r"[\s!?.,;:'\"()\[\]{}。，、！？；：…「」『』（）【】~～]+")


@dataclass(frozen=True)
class TriggerDecision:
    triggered: bool
    reason: str


def _core(text: str) -> str:
    return _PUNCTUATION.sub("", unicodedata.normalize("NFKC", text))


def should_prefetch(query: str, rule: TriggerRule = "multilingual") -> TriggerDecision:
    """Whether a user message is worth a relevance prefetch, and why."""
    text = query.strip()
    if not text:
        return TriggerDecision(False, "empty message")
    has_space = any(ch.isspace() for ch in text)
    if rule == "claude-code":
        if has_space:
            return TriggerDecision(True, "message contains whitespace")
        return TriggerDecision(False, "single word (no whitespace): the agent's rule skips it")
    if rule != "multilingual":
        raise ValueError(f"unknown trigger rule {rule!r}; expected one of {TRIGGER_RULES}")
    core = _core(text)
    if core in _ACKNOWLEDGEMENTS or core.lower() in _ACKNOWLEDGEMENTS:
        return TriggerDecision(False, "acknowledgement, not a question")
    if has_space:
        return TriggerDecision(True, "message contains whitespace")
    total = 0
    for script, pattern, minimum in _SCRIPTS:
        count = len(pattern.findall(text))
        total += count
        if count >= minimum:
            return TriggerDecision(True, f"{count} {script} characters: a phrase, not one word")
    others = sum(1 for ch in core if ch.isalnum()) - total
    if total >= _MIXED_MIN_NO_SPACE and others >= _MIXED_MIN_OTHER:
        return TriggerDecision(True, "mixed-script phrase")
    if total and text.endswith(("?", "？")) and total >= 2:
        return TriggerDecision(True, "a short question")
    return TriggerDecision(False, "single word")
