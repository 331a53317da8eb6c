"""The API's OpenAPI schema, fuzzed with schemathesis against a real ``roost serve`` process.

Every operation gets generated bodies, paths and queries, valid and invalid, a
bounded number of each: none may answer 500, a status or a body the schema does
not document, or accept what the schema says is invalid. (The operations are
walked in one test: schemathesis's pytest loader for a schema that a fixture
gives does not work with this pytest.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Imported when the module is collected, not by from_url during a test: pytest rewrites
# schemathesis (a plugin) as it is imported, and CPython 3.11's AST constructor counts its
# depth per process, so a rewrite while another thread of the worker compiles (a template
# rendered in a thread by an earlier test) can fail with "recursion depth mismatch".
import schemathesis
import schemathesis.specs.openapi.schemas
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode, checks

if TYPE_CHECKING:
    from schemathesis.schemas import APIOperation

    from tests.serve.conftest import Server

EXAMPLES = 15  # per operation and mode: the suite stays quick; CI finds more over time
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.negative_data_rejection,
]


def fuzz(operation: APIOperation, mode: GenerationMode, server: Server) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    def one(case: schemathesis.Case) -> None:
        case.call_and_validate(base_url=server.url, timeout=30, checks=CHECKS)

    one()


def test_no_input_makes_an_undocumented_answer(server: Server) -> None:
    # An invalid body may also be refused as too large (413), before it is read.
    rejections = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]
    config = schemathesis.Config.from_dict(
        {"checks": {"negative_data_rejection": {"expected-statuses": rejections}}}
    )
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=config)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 12
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                fuzz(operation, mode, server)
            except Unsatisfiable:
                # No invalid input exists for an operation that takes none (GET /health).
                assert mode is GenerationMode.NEGATIVE, operation.label
            except Exception as failure:
                raise AssertionError(f"{operation.label} ({mode.value}): {failure}") from failure


def test_the_fuzzing_made_no_traceback(server: Server) -> None:
    assert "Traceback" not in server.errors()
