"""agentctl reads a few SDK files by path, not by import (importing `anthropic` takes over a
second): model deprecations, the thinking-deprecation list, the server-tool versions and the
beta names. If the SDK moves or renames them, these tests fail loudly, instead of agentctl
quietly falling back to its own records."""

from __future__ import annotations

import importlib
import re
import typing

import anthropic

from agentctl.agent.server_tools import SERVER_TOOLS, sdk_betas, sdk_versions
from agentctl.profile.models import (
    sdk_data_file,
    sdk_deprecated_models,
    sdk_literal,
)


def test_the_deprecated_models_file_is_where_agentctl_reads_it() -> None:
    from anthropic._data.deprecated_models import DEPRECATED_MODELS

    assert sdk_data_file("deprecated_models.py") is not None, "anthropic/_data/ moved"
    assert sdk_deprecated_models() == dict(DEPRECATED_MODELS)
    assert DEPRECATED_MODELS, "the SDK lists no deprecated model: check what changed"


def test_the_thinking_deprecation_list_is_read_from_the_sdk() -> None:
    from anthropic._data import models_to_warn_with_thinking_enabled as sdk

    names = sdk_literal(
        "models_to_warn_with_thinking_enabled.py", "MODELS_TO_WARN_WITH_THINKING_ENABLED"
    )
    assert isinstance(names, list | tuple) and names, "the file or its literal moved"
    assert tuple(names) == tuple(sdk.MODELS_TO_WARN_WITH_THINKING_ENABLED)


def test_every_server_tool_version_found_by_file_name_is_a_module_of_the_sdk() -> None:
    versions = sdk_versions()
    for name in SERVER_TOOLS:
        assert versions.get(name), f"no beta_{name}_tool_*_param.py in anthropic/types/beta/"
        for date in versions[name]:
            module = f"anthropic.types.beta.beta_{name}_tool_{date}_param"
            assert importlib.import_module(module) is not None


def test_the_beta_names_read_as_text_are_the_sdks_literal() -> None:
    from anthropic.types import AnthropicBetaParam

    literal = next(a for a in typing.get_args(AnthropicBetaParam) if typing.get_args(a))
    dated = {
        v for v in typing.get_args(literal) if re.fullmatch(r"[a-z0-9-]+-\d{4}-\d{2}-\d{2}", v)
    }
    assert dated and sdk_betas() == frozenset(dated)
    assert "context-management-2025-06-27" in sdk_betas()
    assert anthropic.__version__
