"""`dm_cc run` when the model fails: a retry is said on stderr before its wait (the
answer alone on stdout), a refused key or a prompt too long for the context window
ends the run with what to do. In process, litellm's real HTTP path against the
loopback OpenAI server."""

from __future__ import annotations

import json

import pytest
from support.openai_server import failure, serve, text

pytestmark = pytest.mark.usefixtures("litellm_imported")



def test_run_says_each_retry_on_stderr_and_ends_plainly_on_what_no_retry_fixes(cli, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    script = [failure(529, "Overloaded"), text("done"),
              failure(401, "Incorrect API key provided"),
              failure(400, "This model's maximum context length is 1000 tokens."),
              failure(429, "slow down"), text("as JSON")]
    with serve(script) as server:
        model = ["--model", "openai/test-model", "--api-base", server.base_url + "/v1"]
        retried = cli("run", *model, "hi")
        refused = cli("run", *model, "hi")
        too_long = cli("run", *model, "hi")
        as_json = cli("run", "--json", *model, "hi")
    code, out, err = retried
    assert (code, out) == (0, "done\n")
    assert "dm_cc: overloaded (529), retrying in 0.5 s (attempt 2 of 5)\n" in err
    code, out, err = refused
    assert code == 1 and out == ""
    assert err.endswith("401 the API key was refused (Incorrect API key provided); the key "
                        "comes from OPENAI_API_KEY: check that it is right and may use this "
                        "model\n")
    assert "retrying" not in err
    code, _, err = too_long
    assert code == 1
    assert err.endswith("dm_cc: the conversation is too long for openai/test-model's context "
                        "window (1000 tokens): compacting it and trying again\n"
                        "dm_cc: model error: the conversation is too long for "
                        "openai/test-model's context window (1000 tokens) and there is "
                        "nothing older to summarise; start a new session or change to a model "
                        "with a larger one (/model)\n")
    code, out, err = as_json      # stdout stays JSON Lines; the retry is on stderr
    assert code == 0 and "rate limited (429), retrying in 0.5 s (attempt 2 of 5)" in err
    assert json.loads(out.splitlines()[-1])["text"] == "as JSON"
    assert len(server.bodies) == 6
