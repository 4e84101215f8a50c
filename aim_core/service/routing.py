"""The route an AIMService asks for (F58-F60, wire facts section 4).

:func:`route_request` resolves routing settings (service first, then the
merged runtime config) into a :class:`~aim_core.plugin.providers.RouteRequest`; a
route plugin turns it into its own object. Pure, over wire-format dicts.

Decisions, where upstream leaves a choice or does something we do not copy:

* **No gateway** (Q7): routing enabled without any ``gatewayRef`` is the
  InvalidSpec issue ``GatewayNotConfigured``. As upstream, the controller puts
  it in the plan's issues, so nothing is applied (not even the serving object)
  until the user names a gateway or turns routing off: it is a spec error
  like any other, and applying half a service hides it.
* **Bad path template** (``PathTemplateInvalid``): upstream silently routes
  the default ``/<namespace>/<uid>`` instead. We return an InvalidSpec issue
  naming the template, where it came from and the failing expression, and no
  route: serving traffic on a path the user did not ask for is worse than
  serving none. The controller reports it as the ``HTTPRoute`` component
  (:func:`route_health`, Failed) rather than as a plan issue, so the serving
  object is still applied, as the upstream docs promise ("the
  InferenceService remains intact"). A route applied earlier is left as it was.
* **Bad request timeout** (``InvalidRequestTimeout``): handled like a bad
  path template.
* **Path-template edge cases**, as upstream: an expression whose value is
  empty (a label set to ``""``) leaves an empty segment, which is dropped; a
  ``}`` outside a placeholder is literal text, sanitised with its segment;
  ``pathTemplate: ""`` on the service means the default path, not the runtime
  config's template. Still refused (``PathTemplateInvalid``): unclosed
  placeholders, expressions that match nothing (a missing key), a ``..``
  segment (from the template text or an annotation value), and a path that
  renders empty (a route at ``/`` would take all of the gateway's traffic).
* **Annotations** (Q6): the runtime config's ``routing.annotations`` merged
  with the service's ``spec.routing.annotations``, the service winning, as the
  upstream docs promise (upstream code ignores the service's).

Path templates: ``{expr}`` placeholders are Kubernetes JSONPath over the
AIMService. Supported: ``.a.b`` fields (``\\.`` escapes a dot), ``['k']`` and
``["k"]`` keys (dots allowed inside), ``[0]`` / ``[-1]`` indexes, ``[*]`` and
``.*``, an optional leading ``$``. Filters, slices, unions and recursive
descent are rejected with a message. Every expression must give exactly one
scalar; a missing key is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aim_core.plugin.providers import RouteRequest, ServingEndpoint
from aim_core.reconcile import labels as keys
from aim_core.reconcile import naming
from aim_core.reconcile.durations import to_gateway_duration
from aim_core.reconcile.health import Category, Health, State
from aim_core.reconcile.plan import Issue
from aim_core.runtimeconfig import routing_enabled
from aim_core.service.routing_settings import own_routing as _own_routing
from aim_core.service.routing_settings import routing_settings
from aim_core.service.view import ServiceView

GATEWAY_NOT_CONFIGURED = "GatewayNotConfigured"
PATH_TEMPLATE_INVALID = "PathTemplateInvalid"
INVALID_REQUEST_TIMEOUT = "InvalidRequestTimeout"
MAX_PATH_LENGTH = 200
BACKEND_PORT = 80


class PathTemplateError(ValueError):
    """A path template cannot be rendered; the message says why."""


# ---------------------------------------------------------------- JSONPath subset

_KEY, _INDEX, _ALL = "key", "index", "all"
Step = tuple[str, Any]


def _read_quoted(text: str, pos: int) -> tuple[str, int]:
    start, quote, out = pos, text[pos], []
    pos += 1
    while pos < len(text):
        ch = text[pos]
        if ch == "\\" and pos + 1 < len(text):
            out.append(text[pos + 1])
            pos += 2
        elif ch == quote:
            return "".join(out), pos + 1
        else:
            out.append(ch)
            pos += 1
    raise PathTemplateError(f"unterminated string {text[start:]}")


def _read_bracket(text: str, pos: int) -> tuple[Step, int]:
    end = pos + 1
    if end < len(text) and text[end] in "'\"":
        key, end = _read_quoted(text, end)
        if text[end : end + 1] != "]":
            raise PathTemplateError("expected ']' after a quoted key")
        return (_KEY, key), end + 1
    close = text.find("]", end)
    if close < 0:
        raise PathTemplateError("unclosed '['")
    inner = text[end:close].strip()
    if inner == "*":
        return (_ALL, None), close + 1
    try:
        return (_INDEX, int(inner)), close + 1
    except ValueError:
        raise PathTemplateError(f"[{inner}] is not supported; use a quoted key ['k'], an index [0] or [*]") from None


def _read_field(text: str, pos: int) -> tuple[Step, int]:
    out = []
    while pos < len(text) and text[pos] not in ".[":
        if text[pos] == "\\" and pos + 1 < len(text):
            pos += 1
        out.append(text[pos])
        pos += 1
    name = "".join(out).strip()
    if not name:
        raise PathTemplateError("empty field name ('..' recursive descent is not supported)")
    return ((_ALL, None) if name == "*" else (_KEY, name)), pos


def parse_jsonpath(expr: str) -> list[Step]:
    """The steps of a JSONPath expression such as ``.metadata.labels['team']``.

    :raises PathTemplateError: the expression is empty or uses unsupported syntax.
    """
    text = expr.strip()
    if text.startswith("$"):
        text = text[1:]
    if not text:
        raise PathTemplateError("empty expression")
    if text[0] not in ".[":
        raise PathTemplateError("an expression starts with '.', as in {.metadata.name}")
    steps: list[Step] = []
    pos = 0
    while pos < len(text):
        if text[pos] == "[":
            step, pos = _read_bracket(text, pos)
        elif text[pos] == ".":
            if text[pos + 1 : pos + 2] == "[":  # '.[' is the same as '['
                pos += 1
                continue
            step, pos = _read_field(text, pos + 1)
        else:
            raise PathTemplateError(f"unexpected {text[pos:]!r}")
        steps.append(step)
    return steps


def _describe(steps: list[Step], upto: int) -> str:
    parts = []
    for kind, arg in steps[:upto]:
        if kind == _INDEX:
            parts.append(f"[{arg}]")
        elif kind == _ALL:
            parts.append("[*]")
        else:
            parts.append(f".{arg}" if arg.replace("_", "a").isalnum() else f"[{arg!r}]")
    return "".join(parts) or "the object"


def evaluate(obj: Any, steps: list[Step]) -> list[Any]:
    """Values ``steps`` select in ``obj``.

    :raises PathTemplateError: a key is missing, an index is out of range, or a
        step meets a value of the wrong shape.
    """
    values = [obj]
    for i, (kind, arg) in enumerate(steps):
        where = _describe(steps, i)
        found: list[Any] = []
        for value in values:
            if kind == _KEY:
                if not isinstance(value, Mapping) or arg not in value:
                    raise PathTemplateError(f"{where} has no key {arg!r}")
                found.append(value[arg])
            elif kind == _INDEX:
                if not isinstance(value, list) or not -len(value) <= arg < len(value):
                    raise PathTemplateError(f"{where} has no item [{arg}]")
                found.append(value[arg])
            elif isinstance(value, Mapping):
                found.extend(value.values())
            elif isinstance(value, list):
                found.extend(value)
            else:
                raise PathTemplateError(f"{where} is not a list or object, so [*] selects nothing")
        values = found
    return values


def _scalar(values: list[Any]) -> str:
    if len(values) != 1:
        raise PathTemplateError(f"gives {len(values)} values; it must give exactly one")
    value = values[0]
    if value is None:
        raise PathTemplateError("is null")
    if isinstance(value, Mapping | list):
        raise PathTemplateError(f"gives {'an object' if isinstance(value, Mapping) else 'a list'}, not a single value")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------- path templates


def _placeholders(template: str) -> list[tuple[str, bool]]:
    """The template as pieces: ``(text, False)`` literals and ``(expr, True)`` placeholders."""
    pieces: list[tuple[str, bool]] = []
    pos, literal = 0, []
    while pos < len(template):
        ch = template[pos]
        if ch != "{":  # a '}' outside a placeholder is literal text, sanitised with its segment (as upstream)
            literal.append(ch)
            pos += 1
            continue
        end, quote = pos + 1, ""
        while end < len(template) and (quote or template[end] != "}"):
            c = template[end]
            if quote and c == "\\":
                end += 1
            elif c in "'\"" and (not quote or c == quote):
                quote = "" if quote else c
            elif not quote and c == "{":
                raise PathTemplateError(f"nested '{{' at position {end}")
            end += 1
        if end >= len(template):
            raise PathTemplateError(f"unclosed '{{' at position {pos}")
        pieces += [("".join(literal), False), (template[pos + 1 : end], True)]
        literal, pos = [], end + 1
    pieces.append(("".join(literal), False))
    return [p for p in pieces if p[0] or p[1]]


def _is_annotation(steps: list[Step]) -> bool:
    return len(steps) == 3 and steps[0] == (_KEY, "metadata") and steps[1] == (_KEY, "annotations")


def normalize_path(path: str) -> str:
    """Leading ``/``, no trailing ``/``, empty segments dropped, each segment an RFC 1123 label."""
    segments = [naming.rfc1123(s) for s in path.split("/")]
    return "/" + "/".join(s for s in segments if s)


def render_path(template: str, service: Mapping[str, Any]) -> str:
    """Render a path template against the AIMService ``service`` and normalise it (F59).

    Substituted values are lower-cased RFC 1123 labels, except annotation
    values, which go in raw (so a ``/`` in one makes several segments).

    :raises PathTemplateError: naming the failing expression, or the length.
    """
    out = []
    for text, is_expr in _placeholders(template):
        if not is_expr:
            out.append(text)
            continue
        try:
            steps = parse_jsonpath(text)
            value = _scalar(evaluate(service, steps))
        except PathTemplateError as exc:
            raise PathTemplateError(f"expression {{{text}}}: {exc}") from None
        # An empty value leaves an empty segment, which normalisation drops (as upstream).
        out.append(value if _is_annotation(steps) else naming.rfc1123(value))
    raw = "".join(out)
    if ".." in raw.split("/"):
        raise PathTemplateError(f"it gives {raw!r}; a '..' segment is not allowed in a route path")
    path = normalize_path(raw)
    if path == "/":
        raise PathTemplateError(
            "the rendered path is empty; a route at '/' would take every request the gateway receives"
        )
    if len(path) > MAX_PATH_LENGTH:
        raise PathTemplateError(f"the rendered path is {len(path)} characters long; at most {MAX_PATH_LENGTH} fit")
    return path


def default_path(service: Mapping[str, Any] | ServiceView) -> str:
    view = ServiceView.of(service)
    return normalize_path(f"/{view.namespace}/{view.uid}")


# ---------------------------------------------------------------- the request


def _pick(service: Mapping[str, Any], config: Mapping[str, Any], field: str) -> tuple[Any, str]:
    """A routing field, service first: ``(value, where it came from)``; ``(None, "")`` when unset."""
    own = _own_routing(service).get(field)
    if own not in (None, "", {}):
        return own, f"spec.routing.{field} of the AIMService"
    shared = (config.get("routing") or {}).get(field)
    if shared not in (None, "", {}):
        name = ServiceView.of(service).config_name
        return shared, f"routing.{field} of runtime config {name!r}"
    return None, ""


def route_request(
    service: Mapping[str, Any],
    config: Mapping[str, Any],
    backend_service: str,
    endpoint: ServingEndpoint | None = None,
) -> RouteRequest | Issue | None:
    """The route for ``service``; ``None`` when routing is off; an InvalidSpec issue when it cannot be built.

    :param service: the AIMService as read.
    :param config: the merged runtime config spec.
    :param backend_service: the Service that receives traffic (the runtime
        builder's ``backend_service(<serving object name>)``).
    :param endpoint: the model server pods and port of the runtime (for routes that address pods).
    :returns: ``GatewayNotConfigured``, ``PathTemplateInvalid`` or
        ``InvalidRequestTimeout`` issue (checked in that order), else the request.
    """
    if not routing_enabled(_own_routing(service), config):
        return None
    view = ServiceView.of(service)
    namespace, name = view.namespace, view.name

    gateway, _ = _pick(service, config, "gatewayRef")
    if gateway is None:
        return Issue(
            Category.INVALID_SPEC,
            GATEWAY_NOT_CONFIGURED,
            "routing is enabled but no gateway is configured: set spec.routing.gatewayRef on the AIMService "
            f"or routing.gatewayRef in runtime config {view.config_name!r}, "
            "or set spec.routing.enabled to false",
        )

    template, source = _pick(service, config, "pathTemplate")
    if _own_routing(service).get("pathTemplate") == "":
        template = None  # the service asks for the default path, as upstream (the config's is not used)
    if template is None:
        path = default_path(service)
    else:
        try:
            path = render_path(str(template), service)
        except PathTemplateError as exc:
            return Issue(
                Category.INVALID_SPEC,
                PATH_TEMPLATE_INVALID,
                f"path template {template!r} ({source}) cannot be rendered: {exc}; no route is applied until it "
                "is fixed (remove it to use the default /<namespace>/<uid>)",
            )

    timeout, source = _pick(service, config, "requestTimeout")
    request_timeout = None
    if timeout is not None:
        try:
            request_timeout = to_gateway_duration(timeout)
        except ValueError as exc:
            return Issue(
                Category.INVALID_SPEC,
                INVALID_REQUEST_TIMEOUT,
                f"request timeout {timeout!r} ({source}) is not usable: {exc}; write e.g. '30s', '5m' or '1h30m'",
            )

    annotations = {
        **((config.get("routing") or {}).get("annotations") or {}),
        **(_own_routing(service).get("annotations") or {}),
    }
    service_label = naming.sanitize_label_value(name)
    return RouteRequest(
        service=service,
        name=naming.route_name(name, namespace),
        namespace=namespace,
        labels={keys.SERVICE_LABEL: service_label} if service_label else {},
        annotations={str(k): str(v) for k, v in annotations.items()},
        parent_ref=dict(gateway),
        path=path,
        backend_service=backend_service,
        backend_port=BACKEND_PORT,
        request_timeout=request_timeout,
        endpoint=endpoint if endpoint is not None else ServingEndpoint({}),
        settings=routing_settings(service, config),
    )


def route_health(issue: Issue) -> Health:
    """The ``HTTPRoute`` component's health for an issue :func:`route_request` returned.

    A missing gateway fails the whole service (Q7, and the issue also blocks
    every write). A bad path template or timeout leaves the model serving
    without a route: the component is Degraded with the specific reason, which
    makes the service Degraded and names the reason in ``Ready``, as the
    upstream API documentation promises for ``PathTemplateInvalid``.
    """
    if blocks_service(issue):
        return Health.error(issue.category, issue.reason, issue.message)
    return Health(State.DEGRADED, issue.reason, issue.message)


def blocks_service(issue: Issue) -> bool:
    """Whether the issue belongs in the plan's issues (blocking every apply) rather than only in the
    ``HTTPRoute`` component: true for ``GatewayNotConfigured`` (Q7), false for path and timeout problems."""
    return issue.reason == GATEWAY_NOT_CONFIGURED
