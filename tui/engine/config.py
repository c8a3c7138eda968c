"""The user's config file: endpoints by name, the reviewer's name.

A TOML file in the user's config directory, written (with tomli-w) the first
time sieve needs it. It names the environment variable that holds an API key,
never the key itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs
import tomli_w

from sieve.errors import SieveError, SieveInputError
from sieve.files import read_text
from sieve.scenarios.loader import parse_toml
from sieve.tui.engine.gateway import Endpoint, normalise_base_url

BUILTIN_ENDPOINTS = {
    "openrouter": {"base_url": "https://openrouter.ai/api/v1", "api_key_env": "OPENROUTER_API_KEY"},
}
LOCAL = "local"  # the embedded model, started on demand
MAX_CONFIG_BYTES = 1024 * 1024


class ConfigError(SieveError):
    """The config file or an endpoint name is wrong; the message says where."""

    exit_status = 2


def config_path() -> Path:
    if os.environ.get("SIEVE_CONFIG"):
        return Path(os.environ["SIEVE_CONFIG"])
    return platformdirs.user_config_path("sieve") / "config.toml"


def _initial() -> dict[str, Any]:
    return {
        "reviewer": "",
        "endpoints": {
            "openrouter": dict(BUILTIN_ENDPOINTS["openrouter"]),
            "example-vllm": {"base_url": "http://127.0.0.1:8000/v1", "api_key_env": "VLLM_API_KEY"},
        },
    }


@dataclass
class Config:
    path: Path
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def reviewer(self) -> str:
        return str(self.data.get("reviewer") or "")

    def endpoint_names(self) -> list[str]:
        return sorted({LOCAL, *BUILTIN_ENDPOINTS, *self.data.get("endpoints", {})})

    def endpoint(self, name_or_url: str) -> Endpoint:
        """An endpoint by config name, built-in name, or URL."""
        if name_or_url.startswith(("http://", "https://")):
            base = normalise_base_url(name_or_url)
            key_env = "OPENROUTER_API_KEY" if "openrouter.ai" in base else None
            return Endpoint(base_url=base, api_key_env=key_env)
        entry = self.data.get("endpoints", {}).get(name_or_url) or BUILTIN_ENDPOINTS.get(name_or_url)
        if entry is None:
            raise ConfigError(
                f"no endpoint named '{name_or_url}' (known: {', '.join(self.endpoint_names())}; "
                f"or give a URL; endpoints are defined in {self.path})"
            )
        if not isinstance(entry, dict) or not isinstance(entry.get("base_url"), str):
            raise ConfigError(f"{self.path}: endpoints.{name_or_url}: needs a 'base_url' string")
        return Endpoint(
            base_url=normalise_base_url(entry["base_url"]),
            name=name_or_url,
            api_key_env=entry.get("api_key_env"),
        )


def load_config(create: bool = True) -> Config:
    """Read the config file, writing the initial one first if there is none."""
    path = config_path()
    if not path.exists():
        data = _initial()
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "# sieve's configuration. API keys are never written here: an endpoint names\n"
                "# the environment variable that holds its key (api_key_env).\n" + tomli_w.dumps(data),
                encoding="utf-8",
            )
        return Config(path, data)
    try:
        data = parse_toml(str(path), read_text(path, MAX_CONFIG_BYTES, "config file"))
    except SieveInputError as exc:  # unreadable, too large, not UTF-8, a syntax error: worded path:line:col
        raise ConfigError(str(exc)) from None
    return Config(path, data)
