"""Every parameter of the serve API at its limit, one past it and one inside it, through Flask's test
client on the serve tests' home (the 400k GloVe, the 6-instance token index ``bank``, BATS from the shared data).

``INTEGERS`` lists each endpoint's integer parameters with their range, ``TEXTS`` each text parameter with its
length limit, each with a request that reaches it; a test fails when an endpoint declares (``api.ENDPOINTS``, the
OpenAPI document's table) or reads (its method's source) a parameter the tables do not list or bound it otherwise,
so a new parameter needs one line here. ``/api/projection`` is left to its own tests (``ELSEWHERE``).
One past a limit is a 400 whose one message names the parameter; at a limit and one inside it the request is
answered (integers: a 200 carrying the value; texts: no length error, the longest sentence and probe text a 200).
"""

from __future__ import annotations

import ast
import inspect
from typing import NamedTuple

import pytest

from lexprobe.serve import api
from lexprobe.serve.api import MAX_K, MAX_SHUFFLES, MAX_TEXT
from lexprobe.serve.app import create_app
from serve_fixtures import serve_home

NEIGHBORS = {"index": "glove", "word": "king"}
ANALOGY = {"index": "glove", "a": "man", "a_star": "king", "b": "woman"}
OFFSETS = {"index": "glove", "dataset": "bats", "relation": "I01"}
SENSES = {"index": "bank", "sentence": "we sat on the river bank", "target": "bank"}
PROBE = {"text": "paris is the capital of ___ ."}
OCCURRENCES = {"index": "bank", "sentence": " ".join(["a"] * 1000), "target": "a"}  # 1999 characters; 'a' has
# no instance in 'bank': all six are ranked, with a warning


class Integer(NamedTuple):
    endpoint: str
    name: str
    low: int
    high: int
    request: dict
    low_request: dict | None = None  # a cheaper request for the low values, where one exists


class Text(NamedTuple):
    endpoint: str
    name: str
    limit: int
    request: dict


INTEGERS = [
    Integer("neighbors", "k", 1, MAX_K, NEIGHBORS),
    Integer("analogy", "k", 1, MAX_K, ANALOGY),
    Integer("offsets", "shuffles", 1, MAX_SHUFFLES, OFFSETS),
    Integer("offsets", "seed", 0, 2 ** 31 - 1, OFFSETS),
    Integer("senses", "k", 1, MAX_K, SENSES),
    Integer("senses", "occurrence", 1, 1000, OCCURRENCES,
            {"index": "bank", "sentence": "a bank by the bank", "target": "bank"}),
    Integer("probe", "k", 1, MAX_K, PROBE),
]
TEXTS = [
    *[Text("neighbors", name, 200, NEIGHBORS) for name in ("index", "word")],
    *[Text("analogy", name, 200, ANALOGY) for name in ("index", "a", "a_star", "b", "method", "honest")],
    *[Text("offsets", name, 200, OFFSETS) for name in ("index", "dataset", "lowercase")],
    *[Text("senses", name, 200, SENSES) for name in ("index", "target", "definitions")],
    Text("senses", "sentence", MAX_TEXT, SENSES),
    Text("probe", "model", 200, PROBE),
    Text("probe", "text", MAX_TEXT, PROBE),
    Text("neighbors", "format", 200, NEIGHBORS),  # every endpoint's, read by the app before the endpoint's own
]
# read without a length limit: matched against the dataset's names only, and cut to 80 characters in a message
UNLIMITED = {("offsets", "relation")}
# its parameters depend on the view and meet the method's MAX_POINTS cap first (k = 1000 with pca is 1001 points):
# tests/serve/test_serve_projection.py tests the cap at, past and inside it, and its bad values
ELSEWHERE = {"projection": "tests/serve/test_serve_projection.py"}


@pytest.fixture(scope="module")
def client(tmp_path_factory, glove_home, shared_data):
    return create_app(serve_home(tmp_path_factory.mktemp("serve"), glove_home), data_places=[shared_data]).test_client()


def get(client, endpoint, params):
    response = client.get(f"/api/{endpoint}", query_string=params)
    return response.status_code, response.get_json()


def _listed() -> dict[tuple[str, str], tuple]:
    out = {(p.endpoint, p.name): ("integer", p.low, p.high) for p in INTEGERS}
    out |= {(p.endpoint, p.name): ("text", p.limit) for p in TEXTS}
    return out | {key: ("text", None) for key in UNLIMITED}


def _reads(method: str) -> dict[str, tuple]:
    """The parameters ``Service.<method>`` reads: name -> ("integer", low, high) or ("text", limit) (``choice``
    and ``flag`` read a text of the default limit; ``params.get``: no limit)."""
    default = inspect.signature(api.text).parameters["limit"].default
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(getattr(api.Service, method))))
    value = lambda node: eval(ast.unparse(node), vars(api))  # noqa: E731,S307 (the module's own constants)
    out = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or len(node.args) < 2:
            continue
        called, name = ast.unparse(node.func), node.args[1]
        if called == "params.get":
            out[node.args[0].value] = ("text", None)
        elif called == "integer":
            out[name.value] = ("integer", value(node.args[3]), value(node.args[4]))
        elif called in ("text", "choice", "flag") and isinstance(name, ast.Constant):
            out[name.value] = ("text", next((value(k.value) for k in node.keywords if k.arg == "limit"), default))
    return out


def test_the_tables_list_every_parameter_of_every_endpoint():
    listed = _listed()
    declared, read = {}, {}
    for e in api.ENDPOINTS:
        if e.path in ELSEWHERE:
            continue
        for p in e.params:
            if p.name != "format":
                bound = ("integer", p.minimum, p.maximum) if p.type == "integer" else ("text", p.max_length)
                declared[(e.path, p.name)] = bound
        read |= {(e.path, name): bound for name, bound in _reads(e.method).items()}
    assert {("offsets", "seed"), ("offsets", "relation"), ("senses", "sentence")} <= set(read)  # the reader works
    assert {k: v for k, v in declared.items() if listed.get(k) != v} == {}, "declared: add to INTEGERS/TEXTS"
    assert {k: v for k, v in read.items() if listed.get(k) != v} == {}, "read: add to INTEGERS/TEXTS"
    assert sorted(set(listed) - set(declared) - {("neighbors", "format")}) == [], "listed, declared nowhere"
    assert all(p.name == "format" and p.max_length == 200 for e in api.ENDPOINTS for p in e.params
               if p.name == "format")
    assert set(ELSEWHERE) <= set(api.ENDPOINT)


@pytest.mark.parametrize("param", INTEGERS, ids=lambda p: f"{p.endpoint}-{p.name}")
def test_integers_one_past_each_limit_are_refused(client, param):
    for value in (param.low - 1, param.high + 1):
        status, body = get(client, param.endpoint, {**param.request, param.name: value})
        assert (status, body) == (400, {"error": f"parameter {param.name!r} must be between {param.low} and "
                                                 f"{param.high}, not {value}"})


@pytest.mark.filterwarnings("ignore::lexprobe.kinds.tokens.NoLemmaInstances")
@pytest.mark.parametrize("param", INTEGERS, ids=lambda p: f"{p.endpoint}-{p.name}")
def test_integers_at_each_limit_and_inside_are_answered(client, param):
    for value in (param.low, param.low + 1, param.high - 1, param.high):
        request = param.low_request if param.low_request and value <= param.low + 1 else param.request
        status, body = get(client, param.endpoint, {**request, param.name: value})
        assert status == 200, (value, body)
        if param.name == "occurrence":  # the query marks the occurrence asked for
            assert [w for w in body["query"].split() if w.startswith("[[")] == [f"[[{request['target']}]]"]
            assert body["query"].split().index(f"[[{request['target']}]]") == \
                [n for n, w in enumerate(request["sentence"].split()) if w == request["target"]][value - 1]
        else:
            assert body[param.name] == value
        if param.name == "k":  # as many rows as asked, or every candidate (the token index has 6 instances)
            assert len(body["rows"]) == (min(value, 6) if param.endpoint == "senses" else value)


def _at_limit(param: Text) -> str:
    """A value of exactly ``param.limit`` characters: the sentence and the probe text still a valid request."""
    if param.name == "sentence":
        head = "we sat on the river bank "
        return head + "and " * ((param.limit - len(head)) // 4) + "x" * ((param.limit - len(head)) % 4)
    if param.name == "text":  # 'house' is one token: about 340 tokens, within the masked LM's 512
        tail = " ___ ."
        return "house " * ((param.limit - len(tail)) // 6) + "a" * ((param.limit - len(tail)) % 6) + tail
    return "x" * param.limit


@pytest.mark.parametrize("param", TEXTS, ids=lambda p: f"{p.endpoint}-{p.name}")
def test_texts_at_their_limit_pass_and_one_past_is_refused(client, param):
    at = _at_limit(param)
    assert len(at) == param.limit
    status, body = get(client, param.endpoint, {**param.request, param.name: at + "y"})
    assert (status, body) == (400, {"error": f"parameter {param.name!r} is longer than {param.limit} characters"})
    for value in (at, at[1:]):  # the limit and one inside: no length error (the long sentences answered)
        status, body = get(client, param.endpoint, {**param.request, param.name: value})
        assert "longer than" not in (body.get("error") or ""), body
        if param.limit == MAX_TEXT:
            assert status == 200 and body["rows"], body
