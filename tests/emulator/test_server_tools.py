"""The emulator's server tools over HTTP with the real SDK: search, fetch, errors, streaming."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from agentctl.emulator.corpus import (
    MAX_PAGE_BYTES,
    Corpus,
    Page,
    corpus_from_json,
    load_corpus,
)
from agentctl.emulator.model import Script, ScriptTurn, ToolCall
from agentctl.emulator.server import running
from agentctl.errors import ConfigError
from tests.emulator.helpers import make_client, user

SEARCH = {"type": "web_search_20260318", "name": "web_search"}
FETCH = {"type": "web_fetch_20260318", "name": "web_fetch"}
CODE = {"type": "code_execution_20260521", "name": "code_execution"}
A = "https://docs.example.com/caching.md"
B = "https://other.example.net/caching-notes.md"
CORPUS = Corpus(
    {
        A: Page(A, "Caching", "Prompt caching reads cost a tenth of input.", "2 days ago"),
        B: Page(B, "Caching notes", "More caching notes: writes cost 1.25x."),
    },
)


def script(*turns: list[ToolCall], text: str = "Done.") -> Script:
    return Script(tuple(ScriptTurn(tool_calls=tuple(t)) for t in turns), text)


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)


def create(emu_script: Script, tools: list[dict[str, Any]], prompt: str = "caching?") -> Any:
    with running(script=emu_script, web=CORPUS) as emu:
        client = make_client(emu.base_url)
        body = {"model": "claude-sonnet-5", "max_tokens": 2000, "tools": tools}
        plain = client.beta.messages.create(messages=[user(prompt)], **body)
        with client.beta.messages.stream(messages=[user(prompt)], **body) as stream:
            streamed = stream.get_final_message()
    # Streaming gives back exactly the non-streamed message (ids are per message).
    assert streamed.model_dump(exclude={"id"}) == plain.model_dump(exclude={"id"})
    return plain


def test_search_then_fetch_then_answer_in_one_response() -> None:
    turns = script([call("web_search", query="prompt caching")], [call("web_fetch", url=A)])
    message = create(turns, [SEARCH, FETCH])
    kinds = [b.type for b in message.content]
    assert kinds == [
        "server_tool_use",
        "web_search_tool_result",
        "server_tool_use",
        "web_fetch_tool_result",
        "text",
    ]
    search_use, results, fetch_use, fetched, answer = message.content
    assert search_use.id.startswith("srvtoolu_") and results.tool_use_id == search_use.id
    assert [r.url for r in results.content] == [A, B]  # both share "caching"; A shares "prompt"
    assert results.content[0].page_age == "2 days ago"
    assert fetched.tool_use_id == fetch_use.id and fetched.content.url == A
    assert fetched.content.content.source.data == CORPUS.pages[A].text
    assert answer.text == "Done." and message.stop_reason == "end_turn"
    assert message.usage.server_tool_use.web_search_requests == 1
    assert message.usage.server_tool_use.web_fetch_requests == 1


def test_max_uses_gives_the_error_result_and_is_not_counted() -> None:
    searches = [call("web_search", query="caching")], [call("web_search", query="notes")]
    message = create(script(*searches), [{**SEARCH, "max_uses": 1}])
    second = message.content[3]
    assert second.type == "web_search_tool_result"
    assert second.content.type == "web_search_tool_result_error"
    assert second.content.error_code == "max_uses_exceeded"
    assert message.usage.server_tool_use.web_search_requests == 1


def test_domains_filter_search_and_refuse_fetch() -> None:
    turns = script([call("web_search", query="caching")], [call("web_fetch", url=A)])
    tools = [
        {**SEARCH, "blocked_domains": ["example.com"]},
        {**FETCH, "allowed_domains": ["example.net"]},
    ]
    message = create(turns, tools, prompt=f"caching? see {A}")
    assert [r.url for r in message.content[1].content] == [B]
    assert message.content[3].content.error_code == "url_not_allowed"
    assert message.usage.server_tool_use.web_fetch_requests == 0


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://docs.example.com/missing.md", "url_not_accessible"),
        ("https://nowhere.example/never-mentioned", "url_not_in_prior_context"),
        ("ftp://docs.example.com/x", "invalid_tool_input"),
    ],
)
def test_fetch_errors_use_the_api_codes(url: str, code: str) -> None:
    message = create(script([call("web_fetch", url=url)]), [FETCH], prompt="read " + url[:35])
    assert message.content[1].content.type == "web_fetch_tool_result_error"
    assert message.content[1].content.error_code == code


def test_code_execution_is_refused_unless_scripted() -> None:
    refused = create(script([call("code_execution", code="print(1)")]), [CODE])
    assert refused.content[1].content.error_code == "unavailable"
    scripted = corpus_from_json({"code": {"print(1)": {"stdout": "1\n"}}}, "<test>")
    with running(script=script([call("code_execution", code="print(1)")]), web=scripted) as emu:
        body = {"model": "claude-sonnet-5", "max_tokens": 500, "tools": [CODE]}
        message = make_client(emu.base_url).beta.messages.create(messages=[user("x")], **body)
    result = message.content[1].content
    assert (result.type, result.stdout, result.return_code) == ("code_execution_result", "1\n", 0)


def test_the_newer_code_execution_subtools_are_refused_or_scripted() -> None:
    scripted = corpus_from_json({"code": {"ls": {"stdout": "a.txt\n"}}}, "<test>")
    calls = [call("bash_code_execution", command="ls")], [call("bash_code_execution", command="rm")]
    edit = [call("text_editor_code_execution", command="view", path="a.txt")]
    with running(script=script(*calls, edit), web=scripted) as emu:
        body = {"model": "claude-sonnet-5", "max_tokens": 500, "tools": [CODE]}
        message = make_client(emu.base_url).beta.messages.create(messages=[user("x")], **body)
    ran, refused, edited = message.content[1], message.content[3], message.content[5]
    assert (ran.type, ran.content.type) == (
        "bash_code_execution_tool_result",
        "bash_code_execution_result",
    )
    assert ran.content.stdout == "a.txt\n"
    assert refused.content.error_code == "unavailable"
    assert edited.content.type == "text_editor_code_execution_tool_result_error"


def test_pause_turn_after_the_continuation_limit_and_resend_continues() -> None:
    searches = [[call("web_search", query=f"caching {i}")] for i in range(3)]
    with running(script=script(*searches), web=CORPUS, pause_after=2) as emu:
        client = make_client(emu.base_url)
        body = {"model": "claude-sonnet-5", "max_tokens": 2000, "tools": [SEARCH]}
        messages: list[Any] = [user("caching?")]
        first = client.beta.messages.create(messages=messages, **body)
        assert first.stop_reason == "pause_turn" and len(first.content) == 4
        messages.append({"role": "assistant", "content": first.to_dict()["content"]})
        second = client.beta.messages.create(messages=messages, **body)
    assert second.stop_reason == "end_turn"
    assert [b.type for b in second.content] == [
        "server_tool_use",
        "web_search_tool_result",
        "text",
    ]
    assert second.content[0].input == {"query": "caching 2"}


def test_corpus_folder_and_json_errors_name_the_source(tmp_path: Path) -> None:
    page = tmp_path / "web" / "docs.example.com" / "guide.md"
    page.parent.mkdir(parents=True)
    page.write_text("# The guide\nBody text.\n")
    corpus = load_corpus(tmp_path / "web")
    assert list(corpus.pages) == ["https://docs.example.com/guide.md"]
    assert corpus.pages["https://docs.example.com/guide.md"].title == "The guide"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pages": [{"url": "docs.example.com", "title": "t", "text": ""}]}))
    with pytest.raises(ConfigError, match=r"bad.json: pages\[0\].url: expected an http"):
        load_corpus(bad)


def test_stream_events_per_block() -> None:
    turns = script([call("web_search", query="prompt caching")])
    with running(script=turns, web=CORPUS) as emu:
        client = make_client(emu.base_url)
        body = {"model": "claude-sonnet-5", "max_tokens": 2000, "tools": [SEARCH]}
        with client.beta.messages.stream(messages=[user("caching?")], **body) as stream:
            events = list(stream)
    raw = [e for e in events if e.type.startswith(("content_block", "message_delta"))]
    starts = [e.content_block for e in raw if e.type == "content_block_start"]
    assert [b.type for b in starts] == ["server_tool_use", "web_search_tool_result", "text"]
    assert starts[0].input == {} and len(starts[1].content) == 2  # results arrive whole
    deltas = [e.delta for e in raw if e.type == "content_block_delta" and e.index == 0]
    assert deltas and all(d.type == "input_json_delta" for d in deltas)
    assert json.loads("".join(d.partial_json for d in deltas)) == {"query": "prompt caching"}
    stops = [e.index for e in raw if e.type == "content_block_stop"]
    assert stops == [0, 1, 2]
    (delta,) = [e for e in raw if e.type == "message_delta"]
    assert delta.usage.server_tool_use.web_search_requests == 1


def test_folder_corpus_reads_a_page_when_asked_not_at_load(tmp_path: Path) -> None:
    """Issue 20: a `web/` folder was read whole at load (1,200 sparse 1 MB pages: 1.2 GB);
    now it is indexed, and scoring a search holds one page at a time."""
    web = tmp_path / "web" / "big.example.com"
    web.mkdir(parents=True)
    for index in range(24):
        with (web / f"page{index:02}.txt").open("wb") as handle:
            handle.truncate(900_000)  # sparse: no disk used, 900 kB of text when read
    (web / "zz-hit.md").write_text("# Hit\nthe lonely caching word\n")
    tracemalloc.start()
    try:
        corpus = load_corpus(tmp_path / "web")
        hits = corpus.search("caching", 10)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [page.title for page in hits] == ["Hit"]
    assert len(corpus.pages) == 25
    assert peak < 8_000_000  # pages held whole: over 21 MB
    (web / "zz-hit.md").write_text("# Changed\nread when asked\n")
    assert corpus.pages["https://big.example.com/zz-hit.md"].text == "# Changed\nread when asked\n"


def test_folder_corpus_page_grown_after_indexing_is_cut(tmp_path: Path) -> None:
    page = tmp_path / "web" / "a.example.com" / "p.txt"
    page.parent.mkdir(parents=True)
    page.write_text("small\n")
    corpus = load_corpus(tmp_path / "web")
    with page.open("ab") as handle:
        handle.truncate(MAX_PAGE_BYTES * 3)
    assert len(corpus.pages["https://a.example.com/p.txt"].text) == MAX_PAGE_BYTES
    page.unlink()
    assert corpus.pages["https://a.example.com/p.txt"].text == ""
