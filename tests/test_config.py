"""The config file: written on first use, endpoints by name, OpenRouter built in, keys only by variable name."""

from __future__ import annotations

import tomllib

import pytest

from sieve.engine.config import ConfigError, config_path, load_config


def test_the_config_file_is_written_on_first_use(isolated_user_dirs):
    path = config_path()
    assert str(path).startswith(str(isolated_user_dirs / "config")) and not path.exists()
    config = load_config()
    assert path.exists()
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    assert data["endpoints"]["openrouter"] == {
        "base_url": "https://openrouter.ai/api/v1",
        "api_key_env": "OPENROUTER_API_KEY",
    }
    assert config.reviewer == ""
    assert load_config().data == data  # the second read finds what the first wrote


def test_endpoints_by_name_by_url_and_built_in(isolated_user_dirs):
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(
        'reviewer = "ada"\n[endpoints.lab]\nbase_url = "http://127.0.0.1:8000/v1/chat/completions"\napi_key_env = "LAB_KEY"\n',
        encoding="utf-8",
    )
    config = load_config()
    assert config.reviewer == "ada"
    lab = config.endpoint("lab")
    assert (lab.base_url, lab.api_key_env, lab.label, lab.url) == (
        "http://127.0.0.1:8000/v1",
        "LAB_KEY",
        "lab",
        "http://127.0.0.1:8000/v1/chat/completions",
    )
    router = config.endpoint("openrouter")  # built in even when the file does not name it
    assert router.base_url == "https://openrouter.ai/api/v1" and router.api_key_env == "OPENROUTER_API_KEY"
    url = config.endpoint("https://openrouter.ai/api/v1/")
    assert url.api_key_env == "OPENROUTER_API_KEY" and url.label == "https://openrouter.ai/api/v1"
    with pytest.raises(ConfigError, match="no endpoint named 'nope' .*known: lab, local, openrouter"):
        config.endpoint("nope")


def test_a_broken_config_file_names_its_line(isolated_user_dirs):
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text('reviewer = "ada\n', encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config()
    assert str(caught.value).startswith(f"{path}:1:")
