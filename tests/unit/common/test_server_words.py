"""A model server's error words as a user reads them: its own message, no key, clipped."""

from __future__ import annotations

import json

import pytest

from services.common import local_models as lm

KEY = "sk-zocrates-secret-0123456789"


@pytest.mark.parametrize("before", range(380, 400))
def test_no_part_of_an_echoed_key_survives_the_clip(before: int) -> None:
    body = json.dumps({"error": {"message": "x" * before + f" key {KEY} refused"}})
    words = lm._server_words(body)
    assert len(words) <= 400
    assert "sk-zoc" not in words and "0123" not in words, words


def test_the_servers_message_is_kept_and_the_key_named_hidden() -> None:
    words = lm._server_words(json.dumps({"error": {"message": f"Incorrect API key: {KEY}"}}))
    assert words == "Incorrect API key: [key hidden]"
    assert lm._server_words('{"error": "model \'qwen\' not found"}') == "model 'qwen' not found"
