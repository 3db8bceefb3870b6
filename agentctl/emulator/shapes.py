"""Request shapes the API accepts that the engine does not model directly: `{"role":
"system"}` messages inside `messages` (SDK 2.15 `BetaSystemMessageParam`) and signed
compaction blocks from on-demand compaction (beta compact-2026-09-04)."""

from __future__ import annotations

from typing import Any

from agentctl.emulator.protocol import ApiFailure, stable_id

Json = dict[str, Any]
SIGNATURE_PREFIX = "EmuCmp"  # the emulator's own signatures; others cannot be verified


def sign_summary(content: str) -> str:
    """The signature the emulator puts on an on-demand compaction block."""
    return stable_id(SIGNATURE_PREFIX, content)


def check_signatures(request: Json) -> None:
    """A signed compaction block whose content was changed is refused (G.8 [OBS] text and
    error code). Only the emulator's own signatures are checked; unsigned (threshold)
    blocks never are."""
    for i, message in enumerate(request["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            signature = block.get("signature")
            if block["type"] != "compaction" or not isinstance(signature, str):
                continue
            if signature.startswith(SIGNATURE_PREFIX) and signature != sign_summary(
                str(block.get("content"))
            ):
                raise ApiFailure(
                    400,
                    f"messages.{i}.content.{j}: `compaction` block `content` does not match "
                    "its `signature`",
                    details={"error_code": "compaction_content_mismatch"},
                )


def render_system_messages(request: Json) -> Json:
    """`request` with its system-role messages as the model reads them (ours): a shown
    message's text joins the nearest user message (the one before it, else the next one,
    else a user message of its own at the end); one with `clear_at: "next_user_message"`
    is not shown once a user message follows it. Other block kinds (tool additions and
    removals) are not modelled."""
    messages = request["messages"]
    if not any(m["role"] == "system" for m in messages):
        return request
    out: list[Json] = []
    carried: list[Json] = []  # shown system text waiting for the next user message
    for i, message in enumerate(messages):
        if message["role"] != "system":
            if message["role"] == "user" and carried:
                message = {**message, "content": [*_blocks(message), *carried]}
                carried = []
            out.append(message)
            continue
        later_user = any(m["role"] == "user" for m in messages[i + 1 :])
        if message.get("clear_at") == "next_user_message" and later_user:
            continue
        texts = [b for b in _blocks(message) if b.get("type") == "text"]
        if out and out[-1]["role"] == "user":
            out[-1] = {**out[-1], "content": [*_blocks(out[-1]), *texts]}
        else:
            carried += texts
    if carried:
        out.append({"role": "user", "content": carried})
    return {**request, "messages": out}


def _blocks(message: Json) -> list[Json]:
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return list(content)
