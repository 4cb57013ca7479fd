"""Request and Verdict write their ``__init__`` by hand (each slot set through its
descriptor, for speed): it must stay the one the dataclass would generate."""

import dataclasses
import inspect

import pytest

from dm_cc.permissions.gate import Verdict
from dm_cc.permissions.rules import DEFAULT_RULE, Request


@pytest.mark.parametrize("cls", [Request, Verdict])
def test_init_takes_the_fields_in_order_with_their_defaults(cls):
    params = list(inspect.signature(cls).parameters.values())
    assert [p.name for p in params] == [f.name for f in dataclasses.fields(cls)]
    for param, f in zip(params, dataclasses.fields(cls), strict=True):
        assert f.default_factory is dataclasses.MISSING
        expected = inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        assert param.default == expected, f.name
        assert param.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD


def test_every_field_is_set_and_stays_frozen():
    values = dict(permission="bash", pattern="rm x", aliases=("y",), words=("rm", "x"),
                  allowable=False, sensitive=("-f",), note="n", always="rm *",
                  speculative=True, language="shell", other_names=(("RM", "x"),),
                  protected="p", secret=None)
    request = Request(*values.values())
    assert {f.name: getattr(request, f.name) for f in dataclasses.fields(Request)} == values
    assert request == Request(**values) and hash(request) == hash(Request(**values))
    assert dataclasses.replace(request, pattern="rm z").pattern == "rm z"
    verdict = Verdict(request, DEFAULT_RULE, "ask", "rm x", "why", "layer", "person", 3)
    assert (verdict.request, verdict.rule, verdict.action, verdict.name, verdict.note,
            verdict.layer, verdict.origin, verdict.index) == (
        request, DEFAULT_RULE, "ask", "rm x", "why", "layer", "person", 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.pattern = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.action = "allow"  # type: ignore[misc]
