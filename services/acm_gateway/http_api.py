"""HTTP/JSON for acm.v1.Gateway, transcoded from the RPCs' google.api.http rules (protos/acm/v1/gateway.proto)
onto the same GatewayServicer the gRPC server runs: the same authentication, admission, use cases and errors.

The route table is read from the descriptors, never written by hand: a new rule in the proto is a new route
(docs/openapi.json is generated from the same rules). JSON is protobuf's JSON mapping (json_format): fields in
lowerCamelCase (the proto names are accepted too), int64 as strings, enums by name, timestamps in RFC 3339.
Path variables and query parameters (``scope.customerId=acme``, repeated by repeating the name) fill the fields
the body does not. Errors are google.rpc.Status in JSON with the HTTP status of its code (the mapping of
google/rpc/code.proto) and a google.rpc.ErrorInfo whose metadata has the error id (docs/http-api.md)."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol, cast
from urllib.parse import unquote

import grpc
from google.api import annotations_pb2, http_pb2
from google.protobuf import any_pb2, json_format
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from acm.runtime import LIVENESS
from acm.v1 import gateway_pb2
from acm_gateway.console import PREFIX as CONSOLE_PREFIX
from acm_gateway.console import Console, KeyCheck
from acm_gateway.request_log import _key_id, request_line

log = logging.getLogger("acm.gateway.http")
requests_log = logging.getLogger("acm.requests")

GATEWAY = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]
MAX_BODY_BYTES = 4 * 1024 * 1024  # gRPC's default largest message, so both APIs take the same requests
# Request headers handed to the servicer as gRPC metadata: the credential and the trace context.
FORWARDED_HEADERS = ("authorization", "x-api-key", "traceparent")

# google/rpc/code.proto's HTTP mapping.
HTTP_STATUS = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}
_INTERNAL_ID = re.compile(r"internal error ([0-9a-f]{16})")  # acm.runtime.status_of's id, already logged
_VARIABLE = re.compile(r"\{([\w.]+)(?:=([^}]*))?\}")


class HttpError(Exception):
    """Ends a call with ``code`` and ``message`` (the servicer's abort, or a request that cannot be transcoded)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Route:
    verb: str  # GET, POST, PATCH, PUT or DELETE
    pattern: re.Pattern[str]  # matches the raw (percent-encoded) path; one group per variable
    variables: tuple[str, ...]  # the field path each group fills, e.g. "scope.agent_id"
    body: str  # "": no body; "*": the whole request; else the field the body fills
    method: MethodDescriptor


def _segments_regex(segments: str) -> str:
    """A template's segments (literals, ``*`` one segment, ``**`` the rest) as a regex."""
    parts = []
    for segment in segments.split("/"):
        parts.append("[^/]+" if segment == "*" else ".+" if segment == "**" else re.escape(segment))
    return "/".join(parts)


def compile_template(template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """google.api.http's path template (``/v1/memories/{memory_id}``, ``/v1/context:fetch``) as a regex of the
    raw path and the field paths of its variables, in order."""
    verb = ""
    last = template.rsplit("/", 1)[-1]
    if ":" in last and "}" not in last.rsplit(":", 1)[1]:
        template, verb = template.rsplit(":", 1)
    regex, variables, at = [], [], 0
    for match in _VARIABLE.finditer(template):
        regex.append(_segments_regex(template[at : match.start()]))
        regex.append(f"({_segments_regex(match.group(2)) if match.group(2) else '[^/]+'})")
        variables.append(match.group(1))
        at = match.end()
    regex.append(_segments_regex(template[at:]))
    if verb:
        regex.append(re.escape(f":{verb}"))
    return re.compile("".join(regex) + "$"), tuple(variables)


def routes_of(service: ServiceDescriptor) -> list[Route]:
    """One route per RPC that carries a google.api.http rule (and one per additional binding)."""
    routes = []
    for method in service.methods:
        options = method.GetOptions()
        if not options.HasExtension(annotations_pb2.http):
            continue
        rule: http_pb2.HttpRule = options.Extensions[annotations_pb2.http]
        for binding in (rule, *rule.additional_bindings):
            kind = binding.WhichOneof("pattern")
            if kind is None or kind == "custom":
                continue
            pattern, variables = compile_template(getattr(binding, kind))
            routes.append(Route(kind.upper(), pattern, variables, binding.body, method))
    return routes


def _field(message: Message, name: str) -> FieldDescriptor:
    """The field ``name`` (its proto or its JSON name) of ``message``."""
    descriptor = message.DESCRIPTOR
    found = descriptor.fields_by_name.get(name) or descriptor.fields_by_camelcase_name.get(name)
    if found is None:
        raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"{descriptor.name} has no field {name!r}")
    return cast(FieldDescriptor, found)  # the stubs keep upb's descriptor classes apart; at run time they are one


def _leaf_value(field: FieldDescriptor, values: Sequence[str]) -> Any:
    """A query or path value as json_format reads it (it takes numbers, enums and timestamps from strings)."""

    def one(value: str) -> Any:
        if field.type == FieldDescriptor.TYPE_BOOL:
            if value.lower() in ("true", "1"):
                return True
            if value.lower() in ("false", "0"):
                return False
            raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"{field.name}: {value!r} is not true or false")
        return value

    if field.is_repeated:
        return [one(v) for v in values]
    return one(values[-1])


def set_field(message: Message, path: str, values: Sequence[str]) -> None:
    """Set the field at the dotted ``path`` (proto or JSON names) of ``message`` from text values."""
    *parents, leaf = path.split(".")
    target = message
    for name in parents:
        field = _field(target, name)
        if field.message_type is None or field.is_repeated:
            raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"{path}: {name!r} is not a message field")
        target = getattr(target, field.name)
    field = _field(target, leaf)
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"{path}: a map cannot be given in the query")
    _parse({field.name: _leaf_value(field, values)}, target)


def _parse(data: Any, message: Message) -> None:
    try:
        json_format.ParseDict(data, message)
    except json_format.ParseError as exc:
        raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"invalid request: {exc}") from None


def build_request(route: Route, path_values: Sequence[str], query: Iterable[tuple[str, str]], body: bytes) -> Message:
    """The RPC's request message from the body, the query and the path (the path wins)."""
    request = GetMessageClass(route.method.input_type)()
    if route.body:
        try:
            data = json.loads(body) if body.strip() else {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, f"the body is not JSON: {exc}") from None
        if route.body == "*":
            _parse(data, request)
        else:
            field = _field(request, route.body)
            _parse({field.name: data}, request)
    if route.body != "*":  # with body "*" every field is in the body
        by_name: dict[str, list[str]] = {}
        for name, value in query:
            by_name.setdefault(name, []).append(value)
        for name, values in by_name.items():
            set_field(request, name, values)
    for variable, raw in zip(route.variables, path_values, strict=True):
        set_field(request, variable, [unquote(raw)])
    return request


class _HttpCallContext:
    """What GatewayServicer uses of a grpc.aio.ServicerContext: the metadata (from the request's headers) and
    abort, which ends the call with its status as the gRPC server does."""

    def __init__(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self._metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: object = ()) -> NoReturn:
        raise HttpError(code, details)


def status_body(code: grpc.StatusCode, message: str, error_id: str) -> bytes:
    """google.rpc.Status in JSON, with an ErrorInfo (reason: the code's name, metadata: the error id)."""
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=code.name, domain="acm", metadata={"error_id": error_id}))
    status = status_pb2.Status(code=code.value[0], message=message, details=[info])
    return json.dumps(json_format.MessageToDict(status)).encode()


Handler = Callable[[Message, Any], Awaitable[Message]]


class HttpGateway:
    """The ASGI app: routes from ``service``'s HTTP rules, each call on ``servicer``'s method of the same name."""

    def __init__(self, servicer: object, service: ServiceDescriptor = GATEWAY) -> None:
        self._service = service.full_name
        self._routes = routes_of(service)
        self._servicer = servicer

    def match(self, verb: str, raw_path: str) -> tuple[Route, tuple[str, ...]]:
        """The route and its variables' raw values; NOT_FOUND for no such path, UNIMPLEMENTED for another verb."""
        verbs = []
        for route in self._routes:
            found = route.pattern.match(raw_path)
            if found is None:
                continue
            if route.verb == verb:
                return route, found.groups()
            verbs.append(route.verb)
        if verbs:
            raise HttpError(grpc.StatusCode.UNIMPLEMENTED, f"{raw_path} takes {', '.join(sorted(set(verbs)))}")
        raise HttpError(grpc.StatusCode.NOT_FOUND, f"no API at {raw_path} (docs/openapi.json lists the routes)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan and websockets: nothing to do
            return
        request = Request(scope, receive)
        response = await self._respond(request)
        await response(scope, receive, send)

    async def _respond(self, http: Request) -> Response:
        start = time.perf_counter()
        raw_path = (http.scope.get("raw_path") or http.url.path.encode()).decode("latin-1").split("?", 1)[0]
        metadata = tuple((h, http.headers[h]) for h in FORWARDED_HEADERS if h in http.headers)
        request: Message | None = None
        name = f"{http.method} {raw_path}"
        try:
            route, values = self.match(http.method, raw_path)
            name = f"/{self._service}/{route.method.name}"
            body = await _read_body(http)
            request = build_request(route, values, http.query_params.multi_items(), body)
            context = _HttpCallContext(metadata)
            handler: Handler = getattr(self._servicer, route.method.name)
            response = await handler(request, context)
        except HttpError as exc:
            return self._error(name, request, metadata, exc.code, exc.message, start)
        except Exception as exc:  # a bug in the transcoding itself: the servicer ends its own errors with abort
            error_id = uuid.uuid4().hex[:16]
            log.error("internal error %s", error_id, exc_info=exc)
            message = f"internal error {error_id}; see the server log for this id"
            return self._error(name, request, metadata, grpc.StatusCode.INTERNAL, message, start)
        self._log(name, request, metadata, grpc.StatusCode.OK, start)
        body_json = json_format.MessageToDict(response, always_print_fields_with_no_presence=True)
        return Response(json.dumps(body_json, ensure_ascii=False), media_type="application/json")

    def _error(
        self,
        name: str,
        request: Message | None,
        metadata: tuple[tuple[str, str], ...],
        code: grpc.StatusCode,
        message: str,
        start: float,
    ) -> Response:
        internal = _INTERNAL_ID.search(message)
        error_id = internal.group(1) if internal else uuid.uuid4().hex[:16]
        self._log(name, request, metadata, code, start, error_id)
        return Response(status_body(code, message, error_id), HTTP_STATUS[code], media_type="application/json")

    @staticmethod
    def _log(
        name: str,
        request: Message | None,
        metadata: tuple[tuple[str, str], ...],
        code: grpc.StatusCode,
        start: float,
        error_id: str = "",
    ) -> None:
        if not requests_log.isEnabledFor(logging.INFO):
            return
        line = request_line(f"HTTP {name}", request, _key_id(metadata), code, (time.perf_counter() - start) * 1000)
        requests_log.info("%s%s", line, f" error={error_id}" if error_id else "")


async def _read_body(http: Request) -> bytes:
    """The body, refused past MAX_BODY_BYTES without reading the rest."""
    chunks, size = [], 0
    async for chunk in http.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise HttpError(grpc.StatusCode.RESOURCE_EXHAUSTED, f"the body is over {MAX_BODY_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class HealthCheck(Protocol):
    """grpc_health's aio HealthServicer: the gRPC health the HTTP probes mirror."""

    async def Check(self, request: health_pb2.HealthCheckRequest, context: Any) -> health_pb2.HealthCheckResponse: ...


# The probes: /healthz asks the `liveness` service (SERVING while the process runs), /readyz the server as a
# whole ("" : NOT_SERVING while a dependency fails), exactly as a gRPC probe would.
PROBES = {"/healthz": LIVENESS, "/readyz": ""}
CORS_HEADERS = ("authorization", "content-type", "x-api-key", "traceparent")


class WebApp:
    """What the gateway's HTTP listener serves: the probes, the operator console under /console, and the API.
    ``cors_origins``: the browser origins that may call the API from their own pages (none: only same-origin
    pages, which is all the console needs). ``results_dir``: the benchmark plots the console shows."""

    def __init__(
        self,
        api: HttpGateway,
        keys: KeyCheck,
        health: HealthCheck,
        cors_origins: Sequence[str] = (),
        results_dir: Path | None = None,
    ) -> None:
        self._health = health
        self._console = Console(keys, results_dir)
        self._api: ASGIApp = api
        if cors_origins:
            self._api = CORSMiddleware(
                api,
                allow_origins=list(cors_origins),
                allow_methods=["GET", "POST", "PATCH", "DELETE"],
                allow_headers=list(CORS_HEADERS),
                max_age=600,
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path in PROBES:
            response = await self._probe(PROBES[path])
        elif path == CONSOLE_PREFIX or path.startswith(f"{CONSOLE_PREFIX}/"):
            await self._console(scope, receive, send)
            return
        else:
            await self._api(scope, receive, send)
            return
        await response(scope, receive, send)

    async def _probe(self, service: str) -> Response:
        try:
            answer = await self._health.Check(health_pb2.HealthCheckRequest(service=service), _HttpCallContext(()))
        except HttpError:  # the name is not registered yet: not serving
            status = "SERVICE_UNKNOWN"
        else:
            status = health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status)
        code = 200 if status == "SERVING" else 503
        return Response(json.dumps({"status": status}), code, media_type="application/json")
