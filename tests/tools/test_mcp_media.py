"""Images and PDFs from an MCP tool reach the model as blocks inside the tool_result (a real
server, tests/tools/mcp_server.py, the real SDK over HTTP to the emulator); what the API does
not take, or what is over the profile's size limit, becomes a text note."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)

from agentctl.context.server_model import DEFAULT_CLEARED_RESULT_PLACEHOLDER
from agentctl.emulator import Reply, ScriptedModel, load_script, running
from agentctl.tools.mcp import MediaLimit, result_content

from .mcp_harness import invoke, records, tool_results, write_profile, write_task

PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwAD"
    "hgGAWjR9awAAAABJRU5ErkJggg=="
)
CLEARING = (
    '[context_editing.tool_uses]\nstrategy = "server"\ntrigger_kind = "tool_uses"\n'
    "trigger = 3\nkeep = 1\nclear_at_least = 0\n\n"
)


class SeenRequests:
    """The task's scripted model, keeping every (edited) request it is shown."""

    def __init__(self, script: Path) -> None:
        self.model = ScriptedModel(load_script(script))
        self.seen: list[dict[str, Any]] = []

    def reply(self, request: dict[str, Any]) -> Reply:
        self.seen.append(json.loads(json.dumps(request)))
        return self.model.reply(request)


def tool_result_contents(request: dict[str, Any]) -> list[Any]:
    """The content of every tool_result block of a request, in order."""
    return [
        block["content"]
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.slow
def test_images_and_a_pdf_reach_the_emulator_as_blocks_and_clear_like_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = write_profile(tmp_path, top=CLEARING)
    echo = ("mcp__fx__echo", {"text": "a long enough result " * 20})
    task = write_task(
        tmp_path, [("mcp__fx__picture", {}), ("mcp__fx__media", {})], [echo], [echo], [echo]
    )
    model = SeenRequests(tmp_path / "script.toml")
    with running(model=model) as emu:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", emu.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        result = invoke("run", str(task), "--profile", str(profile), "--json")
        received = [r.body for r in emu.requests if r.path.startswith("/v1/messages")]
    assert result.exit_code == 0, result.output
    # What the emulator received over HTTP for turn 2: both results, with their media.
    picture, media = tool_result_contents(received[1])
    assert picture == [
        {"type": "text", "text": "a pixel"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL}},
    ]
    assert [block["type"] for block in media] == ["text", "text", "image", "text", "document"]
    assert media[0]["text"] == (
        "[image image/bmp, 16 bytes: not sent, the API takes JPEG, PNG, GIF and WebP images only]"
    )
    assert media[2]["source"]["media_type"] == "image/png"
    assert media[3]["text"] == "[resource file:///report.pdf (application/pdf, 15 bytes)]"
    assert media[4]["source"] == {
        "type": "base64",
        "media_type": "application/pdf",
        "data": base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode(),
    }
    # The transcript's result records hold the text form; its messages the blocks.
    texts = [r["content"] for r in tool_results(records())]
    assert texts[0] == "a pixel\n[image image/png, 70 bytes]"
    assert texts[1].splitlines()[1:] == [
        "the chart:",
        f"[image image/png, {base64_size(media[2]['source']['data'])} bytes]",
        "[resource file:///report.pdf (application/pdf, 15 bytes)]",
        "[document application/pdf, 15 bytes]",
    ]
    events = [json.loads(line) for line in result.stdout.splitlines()]
    turns = [e for e in events if e["event"] == "turn"]
    assert [c["name"] for c in turns[0]["tool_calls"]] == ["mcp__fx__picture", "mcp__fx__media"]
    # Clearing: the last request the model was shown has the media result replaced.
    shown = tool_result_contents(model.seen[-1])
    assert shown[1] == DEFAULT_CLEARED_RESULT_PLACEHOLDER
    assert max(a["cleared_tool_uses"] for t in turns for a in t["applied_edits"]) >= 2


def base64_size(data: str) -> int:
    return len(base64.b64decode(data))


def test_media_over_the_limit_audio_and_bad_data_become_notes() -> None:
    big = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()
    result = CallToolResult(
        content=[
            ImageContent(type="image", data=PIXEL, mime_type="image/png"),
            ImageContent(type="image", data=big, mime_type="image/png"),
            ImageContent(type="image", data="not base64!", mime_type="image/gif"),
            AudioContent(
                type="audio", data=base64.b64encode(b"RIFF").decode(), mime_type="audio/wav"
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="x://a.pdf", mime_type="application/pdf", blob=big
                ),
            ),
        ]
    )
    blocks = result_content(result, MediaLimit("fx", 80))
    assert isinstance(blocks, list)
    assert blocks[0]["type"] == "image"
    assert [b.get("text") for b in blocks[1:]] == [
        "[image image/png, 100 bytes: not sent, larger than mcp.servers.fx.max_media_bytes = 80]",
        "[image image/gif, 8 bytes: not sent, its data is not valid base64]",
        "[audio audio/wav, 4 bytes: not sent, the API takes no audio]",
        "[resource x://a.pdf (application/pdf, 100 bytes)]",
        "[document application/pdf, 100 bytes: not sent, larger than"
        " mcp.servers.fx.max_media_bytes = 80]",
    ]


def test_text_only_results_stay_one_string_and_links_keep_their_name() -> None:
    link = ResourceLink(
        type="resource_link", name="log", description="the app's log", uri="file:///l", size=9
    )
    result = CallToolResult(content=[TextContent(type="text", text="see:"), link])
    assert result_content(result, MediaLimit("fx", 80)) == (
        'see:\n[resource link file:///l "log": the app\'s log (unknown type, 9 bytes)]'
    )
