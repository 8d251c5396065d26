import logging

import pytest

from a2a_platform_worker import ServeConfig, config_from_env


def test_defaults_need_only_the_secret() -> None:
    assert config_from_env({"WORKER_SECRET": "s3cret"}) == ServeConfig(
        secret="s3cret", target="127.0.0.1:50052", concurrency=8, tls=False, log_level=logging.INFO
    )


def test_every_variable_is_read() -> None:
    env = {
        "WORKER_SECRET": "s3cret",
        "WORKER_TARGET": "platform:443",
        "WORKER_CONCURRENCY": "32",
        "WORKER_TLS": "true",
        "LOG_LEVEL": "warn",
    }
    assert config_from_env(env, default_concurrency=256) == ServeConfig(
        "s3cret", "platform:443", 32, True, logging.WARNING
    )
    assert config_from_env({"WORKER_SECRET": "s"}, default_concurrency=256).concurrency == 256


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "WORKER_SECRET"),
        ({"WORKER_SECRET": "  "}, "WORKER_SECRET"),
        ({"WORKER_SECRET": "s", "WORKER_CONCURRENCY": "0"}, "WORKER_CONCURRENCY"),
        ({"WORKER_SECRET": "s", "WORKER_CONCURRENCY": "many"}, "WORKER_CONCURRENCY"),
        ({"WORKER_SECRET": "s", "WORKER_TLS": "maybe"}, "WORKER_TLS"),
        ({"WORKER_SECRET": "s", "LOG_LEVEL": "loud"}, "LOG_LEVEL"),
    ],
)
def test_a_missing_or_invalid_variable_is_named(env: dict[str, str], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        config_from_env(env)
