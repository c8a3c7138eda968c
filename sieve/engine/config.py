"""The user's config file: endpoints by name, the reviewer's name and whether they review blind only.

A TOML file in the user's config directory, written (with tomli-w) the first
time sieve needs it. It names the environment variable that holds an API key,
never the key itself. The reviewer is `reviewer = "ada"`, or a table:

    [reviewer]
    name = "ada"
    blind = true      # blind only: runs under codes, never a model, until a blind review is revealed
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
import tomli_w

from sieve.errors import SieveError, SieveInputError
from sieve.files import read_text
from sieve.scenarios.toml_reader import parse_toml

if TYPE_CHECKING:
    from sieve.engine.gateway import Endpoint

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
        entry = self.data.get("reviewer")
        if isinstance(entry, dict):
            return str(entry.get("name") or "")
        return str(entry or "")

    @property
    def blind_only(self) -> bool:
        """`blind = true` under [reviewer]: the reviewer sees runs only blind until they reveal one."""
        entry = self.data.get("reviewer")
        return isinstance(entry, dict) and entry.get("blind") is True

    def blind_for(self, reviewer: str) -> bool:
        """Whether `reviewer` reviews blind only: the config's reviewer (anyone, if it names nobody) when blind = true."""
        return self.blind_only and (not self.reviewer or reviewer == self.reviewer)

    def check(self) -> None:
        """ConfigError, naming the key, for a value of the wrong kind."""
        entry = self.data.get("reviewer")
        if entry is None or isinstance(entry, str):
            return
        if not isinstance(entry, dict):
            raise ConfigError(f"{self.path}: reviewer: a name, or a table with name and blind")
        if not isinstance(entry.get("name", ""), str):
            raise ConfigError(f"{self.path}: reviewer.name: must be a string")
        if not isinstance(entry.get("blind", False), bool):
            raise ConfigError(f"{self.path}: reviewer.blind: must be true or false")
        unknown = sorted(set(entry) - {"name", "blind"})
        if unknown:
            raise ConfigError(f"{self.path}: reviewer.{unknown[0]}: unknown key (the keys are name and blind)")

    def endpoint_names(self) -> list[str]:
        return sorted({LOCAL, *BUILTIN_ENDPOINTS, *self.data.get("endpoints", {})})

    def endpoint(self, name_or_url: str) -> Endpoint:
        """An endpoint by config name, built-in name, or URL."""
        # Here, not at the top: commands that only read the config (`sieve runs`, the
        # reviewer's name) should not pay for importing the HTTP client.
        from sieve.engine.gateway import Endpoint, normalise_base_url

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
    config = Config(path, data)
    config.check()
    return config
