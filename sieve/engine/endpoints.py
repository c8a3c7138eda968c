"""Gateways by endpoint name or URL, for the CLI and the TUI alike.

The embedded model is started only when a run needs it, and stopped with the pool.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sieve.engine.config import LOCAL, load_config
from sieve.engine.gateway import Endpoint, Gateway, RequestSettings
from sieve.engine.local_model import DEFAULT_MAX_TOKENS, MODEL_NAME, LocalModel
from sieve.engine.session import resolve_settings
from sieve.scenarios import Scenario
from sieve.store.record.rows import Run


def is_local(name_or_url: str | None) -> bool:
    return name_or_url in (None, "", LOCAL)


def settings_for(scenario: Scenario, model: str | None, local: bool, *layers: dict[str, Any] | None) -> RequestSettings:
    """The settings of a new run. The embedded model gets a lower output ceiling (a 135M
    model loops readily) and no reasoning effort (it does not reason), unless a layer asks."""
    base = {"max_tokens": DEFAULT_MAX_TOKENS} if local else None
    settings = resolve_settings(model or MODEL_NAME, scenario, base, *layers)
    if local and not any((layer or {}).get("reasoning_effort") for layer in layers):
        settings = dataclasses.replace(settings, reasoning_effort=None)
    return settings


class Endpoints:
    """Gateways by endpoint name or URL, starting the embedded model only if a run needs it."""

    def __init__(self, announce: Callable[[str], None] | None = None) -> None:
        self.config = load_config()
        self.announce = announce or (lambda text: None)
        self.local: LocalModel | None = None
        self.gateways: dict[str, Gateway] = {}

    def gateway(self, name_or_url: str | None, sharing: int = 1) -> Gateway:
        """The gateway to an endpoint. `sharing`: how many runs will send requests through it at once;
        the embedded model, when this call starts it, answers that many at a time (the rest wait their turn)."""
        key = name_or_url or LOCAL
        if key not in self.gateways:
            if key == LOCAL:
                self.local = LocalModel(slots=sharing)
                self.announce(f"Starting the embedded model ({self.local.description})...")
                endpoint = self.local.start()
            else:
                endpoint = self.config.endpoint(key)
            self.gateways[key] = Gateway(endpoint)
        return self.gateways[key]

    def for_record(self, run: Run, sharing: int = 1) -> Gateway:
        """The gateway a stored run was played through (a new local server if it was local)."""
        label = run["endpoint"]
        if label == LOCAL:
            return self.gateway(LOCAL, sharing)
        if label.startswith(("http://", "https://")) or label not in self.config.endpoint_names():
            settings = run["settings"]
            base = settings.get("endpoint_url") or label
            key = f"record:{base}"
            if key not in self.gateways:
                self.gateways[key] = Gateway(Endpoint(base_url=base, api_key_env=settings.get("api_key_env")))
            return self.gateways[key]
        return self.gateway(label, sharing)

    async def aclose(self) -> None:
        for gateway in self.gateways.values():
            await gateway.aclose()

    def stop(self) -> None:
        if self.local is not None:
            self.local.stop()
