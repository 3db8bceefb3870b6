"""Server tools the emulator runs inside one response: web_search, web_fetch, code_execution.

Each call the model makes to a tool the request offers as a server tool (a typed tool such as
`web_search_20260318`, not a custom one) is answered here with the result block the API
appends: pages from the corpus, the API's error codes for what it refuses.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentctl.emulator.corpus import Corpus, Page

Json = dict[str, Any]

SERVER_TOOL_NAMES = ("web_search", "web_fetch", "code_execution")
# What the model calls under the newer code_execution versions (20250825 on): a shell and a
# file editor in the sandbox, besides `code_execution` itself (the 20250522 Python tool).
CODE_SUBTOOLS = ("bash_code_execution", "text_editor_code_execution")
MAX_RESULTS = 5  # results per search (ours; the API returns "up to" about this many)
SNIPPET_CHARS = 400  # text behind a result's encrypted_content (ours)
CHARS_PER_TOKEN = 4  # max_content_tokens -> characters kept (the API's cut is approximate too)
MAX_QUERY_CHARS = 500  # longer queries get `query_too_long` (ours; the API's limit is not public)


def offered_server_tools(request: Json) -> dict[str, Json]:
    """name -> definition of each server tool the request offers."""
    found: dict[str, Json] = {}
    for tool in request.get("tools") or []:
        kind = str(tool.get("type", ""))
        name = str(tool.get("name", ""))
        if name in SERVER_TOOL_NAMES and kind.startswith(f"{name}_"):
            found[name] = tool
    if "code_execution" in found:
        found.update(dict.fromkeys(CODE_SUBTOOLS, found["code_execution"]))
    return found


@dataclass
class ServerToolRunner:
    """Runs the server tools of one response; counts uses against each tool's max_uses."""

    tools: dict[str, Json]
    corpus: Corpus
    context: str  # the conversation's text: a URL must appear in it to be fetched
    used: dict[str, int] = field(default_factory=dict)

    @property
    def web_search_requests(self) -> int:
        return self.used.get("web_search", 0)

    @property
    def web_fetch_requests(self) -> int:
        return self.used.get("web_fetch", 0)

    def run(self, name: str, tool_id: str, arguments: Mapping[str, Any]) -> Json:
        """The result block for one call (an error result when the API would refuse it)."""
        tool = self.tools[name]
        limit = tool.get("max_uses")
        if isinstance(limit, int) and self.used.get(name, 0) >= limit:
            return _result(name, tool_id, _error(name, "max_uses_exceeded"))
        if name == "web_search":
            content = self._search(tool, arguments)
        elif name == "web_fetch":
            content = self._fetch(tool, arguments)
        else:
            content = self._execute(name, arguments)
        if not _is_error(content) or name == "code_execution":
            self.used[name] = self.used.get(name, 0) + 1
        return _result(name, tool_id, content)

    def _search(self, tool: Json, arguments: Mapping[str, Any]) -> Any:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return _error("web_search", "invalid_tool_input")
        if len(query) > MAX_QUERY_CHARS:
            return _error("web_search", "query_too_long")
        pages = self.corpus.search(query, MAX_RESULTS, lambda page: allowed(tool, page))
        return [_search_result(page) for page in pages]

    def _fetch(self, tool: Json, arguments: Mapping[str, Any]) -> Json:
        url = arguments.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            return _error("web_fetch", "invalid_tool_input")
        if url not in self.context:
            return _error("web_fetch", "url_not_in_prior_context")
        page = self.corpus.pages.get(url)
        if page is not None and not allowed(tool, page):
            return _error("web_fetch", "url_not_allowed")
        if page is None:
            return _error("web_fetch", "url_not_accessible")
        return _fetch_result(page, tool)

    def _execute(self, name: str, arguments: Mapping[str, Any]) -> Json:
        """A scripted run of exactly this code (`code`, or a bash `command`), else refused."""
        code = arguments.get("command" if name == "bash_code_execution" else "code")
        run = self.corpus.code.get(code) if isinstance(code, str) else None
        if run is None or name == "text_editor_code_execution":
            return _error(name, "unavailable")  # no sandbox here, as when the API has none
        kind = "bash_code_execution" if name == "bash_code_execution" else "code_execution"
        return {
            "type": f"{kind}_result",
            "stdout": run.stdout,
            "stderr": run.stderr,
            "return_code": run.return_code,
            "content": [],
        }


def allowed(tool: Mapping[str, Any], page: Page) -> bool:
    """The tool's allowed_domains / blocked_domains (subdomains included) let this page through."""
    allow, block = tool.get("allowed_domains"), tool.get("blocked_domains")
    if allow:
        return any(_within(page.domain, d) for d in allow)
    return not any(_within(page.domain, d) for d in block or ())


def _within(host: str, domain: str) -> bool:
    domain = str(domain).lower().removeprefix("www.")
    host = host.removeprefix("www.")
    return host == domain or host.endswith("." + domain)


def _search_result(page: Page) -> Json:
    snippet = page.text[:SNIPPET_CHARS].encode()
    result: Json = {
        "type": "web_search_result",
        "url": page.url,
        "title": page.title,
        "encrypted_content": base64.b64encode(snippet).decode(),
    }
    if page.page_age:
        result["page_age"] = page.page_age
    return result


def _fetch_result(page: Page, tool: Mapping[str, Any]) -> Json:
    text = page.text
    cap = tool.get("max_content_tokens")
    if isinstance(cap, int) and cap > 0:
        text = text[: cap * CHARS_PER_TOKEN]
    citations = tool.get("citations")
    document: Json = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": text},
        "title": page.title,
    }
    if isinstance(citations, Mapping):
        document["citations"] = {"enabled": bool(citations.get("enabled"))}
    return {"type": "web_fetch_result", "url": page.url, "content": document}


def _error(name: str, code: str) -> Json:
    return {"type": f"{name}_tool_result_error", "error_code": code}


def _is_error(content: Any) -> bool:
    return isinstance(content, dict) and str(content.get("type", "")).endswith("_error")


def _result(name: str, tool_id: str, content: Any) -> Json:
    return {"type": f"{name}_tool_result", "tool_use_id": tool_id, "content": content}
