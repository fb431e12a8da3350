"""Which selector a recall uses: ``auto`` (anthropic with a key, else a configured local model,
else lexical) or the one named (:func:`choose_selector`), from the settings
(:func:`selector_from_settings`). Above both selectors' modules, so neither imports the other."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from memdir import constants as C
from memdir.config import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_TIMEOUT,
    OPENAI_BASE_URL_ENV,
    SELECTOR_NAMES,
    SelectorName,
    Settings,
)
from memdir.target import DEFAULT_TARGET, Target

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic
from memdir.recall.select import (
    SELECT_MAX_RETRIES,
    AnthropicSelector,
    LexicalSelector,
    Selector,
    credential_source,
)


def choose_selector(
    name: SelectorName = "auto",
    *,
    model: str | None = None,
    timeout: float | None = None,
    max_retries: int = SELECT_MAX_RETRIES,
    env: Mapping[str, str] | None = None,
    client: AsyncAnthropic | None = None,
    target: Target = DEFAULT_TARGET,
    openai_base_url: str = DEFAULT_OPENAI_BASE_URL,
    openai_model: str | None = None,
    openai_timeout: float = DEFAULT_OPENAI_TIMEOUT,
    auto_uses_key: bool = True,
) -> Selector:
    """The selector for a name. ``auto``, in order: anthropic when credentials are configured
    (the agent's own selector), else openai-compatible when a model is configured for it
    (``openai_model``), else lexical. With ``auto_uses_key`` false, credentials in the
    environment do not make ``auto`` anthropic (the prompt hook: a paid, blocking request before
    every prompt is asked for by naming the selector, never implied by a key the agent passes).

    An explicitly named model selector is returned even when it cannot run (no credentials, no
    model): it degrades to lexical with the reason recorded, since the user asked for it and
    should see why not. ``model`` is the anthropic model; ``timeout``, when given, replaces
    either model selector's own.
    """
    if name not in SELECTOR_NAMES:
        raise ValueError(f"unknown selector {name!r}; expected one of {', '.join(SELECTOR_NAMES)}")
    if name == "auto":
        if client is not None or (auto_uses_key and credential_source(env) is not None):
            name = "anthropic"
        elif openai_model:
            name = "openai-compatible"
        else:
            name = "lexical"
    if name == "lexical":
        return LexicalSelector()
    if name == "openai-compatible":
        # Imported here: the module is only needed by those who configure a local model.
        from memdir.recall.select_openai import OpenAICompatibleSelector

        return OpenAICompatibleSelector(
            model=openai_model,
            base_url=openai_base_url,
            timeout=openai_timeout if timeout is None else timeout,
            env=env,
        )
    return AnthropicSelector(
        model=model or C.DEFAULT_SELECTOR_MODEL,
        timeout=C.SELECT_TIMEOUT_SECONDS if timeout is None else timeout,
        max_retries=max_retries,
        client=client,
        env=env,
        target=target,
    )


def selector_from_settings(
    settings: Settings,
    *,
    target: Target | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    client: AsyncAnthropic | None = None,
    base_url: str | None = None,
    auto_uses_key: bool = True,
) -> Selector:
    """:func:`choose_selector` for ``settings.selector`` with every selector setting applied.

    The openai-compatible server is ``base_url`` (``--base-url``), else ``MEMDIR_OPENAI_BASE_URL``
    in ``env`` (default ``os.environ``), else ``openai_base_url``: settings files may only name
    this machine, these two may name any server.
    """
    environ = os.environ if env is None else env
    base_url = base_url or environ.get(OPENAI_BASE_URL_ENV, "").strip() or settings.openai_base_url
    return choose_selector(
        settings.selector,
        model=settings.model,
        timeout=timeout,
        env=env,
        client=client,
        target=settings.agent_target if target is None else target,
        openai_base_url=base_url,
        openai_model=settings.openai_model,
        openai_timeout=settings.openai_timeout,
        auto_uses_key=auto_uses_key,
    )
