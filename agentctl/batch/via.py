"""`--via batches`: one RoundCoordinator for the whole batch, over one Message Batches client
(offline: one emulator serving the batches endpoints for every task)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from agentctl.agent.rounds import RoundCoordinator
from agentctl.context.calibration import resolve_server_model
from agentctl.profile.loader import Overrides
from agentctl.runner import connect, resolve

if TYPE_CHECKING:
    from agentctl.agent.retry import RetryGate
    from agentctl.batch.folder import BatchSpec


@contextmanager
def open_rounds(spec: BatchSpec, gate: RetryGate | None = None) -> Iterator[RoundCoordinator]:
    """The coordinator for a `--via batches` run, set up from the batch's profile and --set
    ([api] for the client, context_editing for the offline emulator)."""
    # The SDK (over a second to import): only for --via batches.
    from agentctl.agent.client import AnthropicBatches

    profile, _ = resolve(spec.profile_arg(), Overrides(sets=spec.sets))
    server = resolve_server_model(profile.context_editing.server_model, source=profile.source)
    offline = spec.offline
    with connect(profile, AnthropicBatches, offline=offline, server=server.model, gate=gate) as api:
        yield RoundCoordinator(api, max_retries=profile.api.max_retries)
