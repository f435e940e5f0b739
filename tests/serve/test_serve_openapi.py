"""The OpenAPI document the app serves (``/api/openapi.json``) against the live app: schemathesis generates requests
from it (valid and invalid parameters, a bounded number per endpoint) and sends them to a waitress server on
loopback over the small real home; no answer may be a 5xx, and every answer must be one the document describes
(status, content type, JSON shape). The document must also name every parameter the code reads."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import (content_type_conformance, negative_data_rejection, not_a_server_error,
                                 response_schema_conformance, status_code_conformance)

from lexprobe.serve.api import ENDPOINT, ENDPOINTS, openapi
from lexprobe.serve.app import Running, create_app
from serve_fixtures import small_home

EXAMPLES = 12  # per endpoint and generation phase: about 30 s in all


@pytest.fixture(scope="module")
def served(tmp_path_factory, shared_data):
    home = small_home(tmp_path_factory.mktemp("serve_openapi"))
    with Running(home, models=(), data_places=[shared_data]) as url:
        yield url


@pytest.fixture(scope="module")
def api_schema(served):
    schema = schemathesis.openapi.from_url(f"{served}/api/openapi.json")
    schema.config.generation.update(allow_x00=False)
    return schema


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
# a real index for valid requests, so that real answers are checked too (senses reads a token index)
REAL_INDEX = {"indexes": None, "probe": None, "senses": "bank"}


@pytest.mark.parametrize("endpoint, mode", [(e.path, m) for e in ENDPOINTS for m in ("positive", "negative")]
                         + [("openapi.json", "positive")])  # the document itself takes no parameter
def test_the_live_app_answers_as_its_openapi_document_says(api_schema, endpoint, mode):
    """Valid requests (``positive``: the index fixed to a real one) and invalid ones (``negative``: a parameter
    outside its type, bounds or choices, or a required one missing, which must get a 4xx)."""
    from schemathesis.generation import GenerationMode

    operation = api_schema[f"/api/{endpoint}"]["GET"]
    index = REAL_INDEX.get(endpoint, "glove")
    fixed = {"query": {"index": index}} if mode == "positive" and index else {}
    checks = CHECKS + ([negative_data_rejection] if mode == "negative" else [])

    @given(operation.as_strategy(GenerationMode(mode), **fixed))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    def answers(case):
        case.call_and_validate(checks=checks, timeout=120)  # a first senses request loads WordNet

    answers()


class Reading(dict):
    """Query parameters that remember which names the code read."""

    def __init__(self, values):
        super().__init__(values)
        self.read = set()

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)


@pytest.mark.parametrize("endpoint, params", [
    ("neighbors", {"index": "glove", "word": "king"}),
    ("analogy", {"index": "glove", "a": "man", "a_star": "king", "b": "woman"}),
    ("offsets", {"index": "glove", "dataset": "bats", "relation": "I01", "shuffles": "2"}),
    ("senses", {"index": "bank", "sentence": "the bank of the river", "target": "bank"}),
    ("projection", {"index": "glove", "words": "king queen man"}),
    ("projection", {"index": "glove", "view": "neighbors", "word": "king", "k": "3", "method": "tsne"}),
    ("projection", {"index": "glove", "view": "relation", "pairs": "man woman\nking queen", "method": "tsne"}),
    ("projection", {"index": "glove", "view": "relation", "dataset": "bats", "relation": "I01"}),
    ("projection", {"index": "bank", "view": "senses", "lemma": "bank"}),
    ("projection", {"index": "glove", "view": "inserted"}),
])
def test_real_answers_read_documented_parameters_and_match_the_document(tmp_path_factory, shared_data, endpoint,
                                                                       params):
    """A real answer of each endpoint and view: every parameter its code read is documented, and the answer fits
    the document's JSON schema (the generated requests above mostly get errors)."""
    from jsonschema import Draft202012Validator

    service = create_app(small_home(tmp_path_factory.mktemp("serve_openapi")), models=(),
                         data_places=[shared_data]).config["lexprobe.service"]
    documented = {e.path: {p.name for p in e.params} for e in ENDPOINTS}
    query = Reading(params)
    answer = getattr(service, {e.path: e.method for e in ENDPOINTS}[endpoint])(query)
    assert query.read and query.read <= documented[endpoint] - {"format"}, query.read - documented[endpoint]
    schema = openapi("0")["paths"][f"/api/{endpoint}"]["get"]["responses"]["200"]["content"]["application/json"]
    errors = [e.message for e in Draft202012Validator(schema["schema"]).iter_errors(answer)]
    assert not errors and answer[ENDPOINT[endpoint].rows[0]], errors


def test_the_document_lists_every_route(served):
    import json
    import urllib.request

    with urllib.request.urlopen(f"{served}/api/openapi.json") as response:
        document = json.load(response)
    assert document["openapi"] == "3.1.0"
    schemathesis.openapi.from_dict(document).validate()  # against the OpenAPI 3.1 schema: raises if not
    assert sorted(document["paths"]) == sorted([f"/api/{e.path}" for e in ENDPOINTS] + ["/api/openapi.json"])
    k = next(p for p in document["paths"]["/api/neighbors"]["get"]["parameters"] if p["name"] == "k")
    assert k["schema"] == {"type": "integer", "default": 10, "minimum": 1, "maximum": 1000}
