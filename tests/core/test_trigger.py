from __future__ import annotations

import pytest
from memdir.agent.trigger import should_prefetch


@pytest.mark.parametrize(
    "query",
    [
        "how do we deploy to staging",
        "为什么测试失败了",
        "部署流程是什么",
        "ruff的配置在哪",
        "デプロイの手順を教えて",
        "วิธีการทดสอบโค้ดนี้",
        "  what is the freeze?  ",
        "数据保留多久？",
    ],
)
def test_multilingual_triggers_on_questions(query: str) -> None:
    assert should_prefetch(query).triggered


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        "yes",
        "continue",
        "继续",
        "好的。",
        "谢谢！",
        "ありがとう",
        "はい",
        "ok",
        "ขอบคุณครับ",
    ],
)
def test_multilingual_skips_single_words_and_acknowledgements(query: str) -> None:
    decision = should_prefetch(query)
    assert not decision.triggered
    assert decision.reason


def test_claude_code_rule_needs_whitespace() -> None:
    assert should_prefetch("how do we deploy", "claude-code").triggered
    assert not should_prefetch("为什么测试失败了", "claude-code").triggered
    assert not should_prefetch("deploy", "claude-code").triggered
    assert should_prefetch("好的 谢谢", "claude-code").triggered


def test_unknown_rule_rejected() -> None:
    with pytest.raises(ValueError, match="unknown trigger rule"):
        should_prefetch("hello there", "nope")  # type: ignore[arg-type]
