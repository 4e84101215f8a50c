"""Collectors behind the docs index test: what the code can set or read, found by walking its AST.

Each function takes Python source text (so it can be tested on a small sample)
and returns names; :func:`scan` runs one over every module of the core and the
shipped plugins (their tests and the test-support package excluded).

Condition reasons are CamelCase string literals (``ImageNotFound``) in these
places, which between them cover how the code builds conditions:

* positional arguments of ``Health(...)``, ``Health.ok/progressing/error(...)``,
  ``issue(...)``, ``Issue(...)`` and the like (any call named in :data:`REASON_CALLS`);
* a positional argument followed by one that reads like a message (an f-string
  or text with a space, or a variable called ``message``): the ``reason,
  message`` pair of ``Condition(type, status, reason, message)``,
  ``ReconcileError.invalid_spec(reason, message)``, ``_not_available(reason,
  message)`` and every helper written the same way; the same pair in a tuple
  (``problems.append(("InvalidModelSource", f"..."))``);
* keyword arguments ``reason=`` and ``*_reason=``;
* assignments to ``reason`` / ``*_reason`` (plain, annotated, attributes);
* dict literals with a ``"reason"`` key;
* tuples that pair a ``Category.X`` or ``State.X`` with a string (tables of
  ``(category, reason, pattern)``);
* module constants whose name contains ``REASON`` (a string, or any string in
  the dict, list, tuple or set they hold);
* comparisons with a variable called ``reason`` / ``*_reason`` or with
  ``x.get("reason")`` (reasons read from pods and Events that the code passes
  on or maps to its own);
* both branches of a conditional expression in any of the above; upper-case
  constants (of the module or of any other scanned module, e.g. an imported
  ``GATEWAY_NOT_CONFIGURED``) are resolved to their strings.

The collector errs on the side of finding more: a CamelCase word passed to one
of those calls is treated as a reason even if it is a message.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

REASON = re.compile(r"^[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*$")  # CamelCase: not "GET", not "STATUS"
REASON_CALLS = frozenset(
    {
        "Health",
        "ok",
        "progressing",
        "error",
        "pending",
        "starting",
        "failed",
        "degraded",
        "not_available",
        "issue",
        "Issue",
    }
)
_MESSAGE_BUILDER = re.compile(r"message|msg|join|clip|format|detail|describe|explain|not_ready|^str$|redact")
#: ``Condition.true(type, reason, message)``, ``Condition.false(...)``: the reason is the second argument.
CONDITION_SHORTHANDS = frozenset({"true", "false", "unknown"})
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{4,}$")


def source_files(*, test_support: bool = False) -> list[Path]:
    """Every module of the core, the shipped plugins and the example plugins, without their tests.

    ``testing/aim_testing`` (the emulator and fixtures) is left out unless ``test_support``.
    """
    files = [
        *ROOT.glob("aim_core/**/*.py"),
        *ROOT.glob("plugins/*/aim_plugin_*/**/*.py"),
        *ROOT.glob("examples/plugins/*/aim_example_*/**/*.py"),
    ]
    return sorted(
        p
        for p in files
        if "tests" not in p.relative_to(ROOT).parts
        and (test_support or p.relative_to(ROOT).parts[:2] != ("aim_core", "testing"))
    )


def scan(collector: Callable[[str], set[str]], files: Iterable[Path] | None = None) -> dict[str, list[str]]:
    """``{name: [files that mention it]}`` over ``files`` (default :func:`source_files`)."""
    found: dict[str, list[str]] = {}
    for path in files if files is not None else source_files():
        for name in collector(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


# ---------------------------------------------------------------------------
# Condition reasons
# ---------------------------------------------------------------------------


def _strings(node: ast.AST | None) -> Iterator[str]:
    """String literals of ``node``: itself, both branches of ``a if c else b``, ``x or "y"``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _strings(value)


def _deep_strings(node: ast.AST) -> Iterator[str]:
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            yield child.value


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _is_reason_name(name: str) -> bool:
    lowered = name.lower()
    return lowered == "reason" or lowered.endswith("_reason")


def _target_names(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Attribute):
        yield target.attr
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _target_names(element)


def _is_class_member(node: ast.Attribute) -> bool:
    """``Category.AUTH``, ``Slot.GRANTED``: a member of a class (an enum), not a module's constant."""
    return isinstance(node.value, ast.Name) and node.value.id[:1].isupper()


def _is_enum_member(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("Category", "State")
    )


def _is_message(node: ast.expr) -> bool:
    """An argument that reads like a condition message: an f-string, text with a space, or a ``message`` name."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and " " in str(v.value) for v in node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return " " in node.value.strip()
    if isinstance(node, ast.BinOp):
        return _is_message(node.left) or _is_message(node.right)
    if isinstance(node, ast.Call):  # a helper that builds text: _not_ready(...), "; ".join(...), _clip(...)
        return bool(_MESSAGE_BUILDER.search(_call_name(node.func)))
    name = _call_name(node) if isinstance(node, ast.Name | ast.Attribute) else ""
    return "message" in name.lower() or name.lower() in ("msg", "detail", "text", "problem", "why")


def _is_collection(node: ast.expr) -> bool:
    """A literal set, tuple, list or dict, or ``frozenset({...})``."""
    if isinstance(node, ast.Call) and _call_name(node.func) in ("frozenset", "set", "tuple"):
        return bool(node.args) and _is_collection(node.args[0])
    return isinstance(node, ast.Set | ast.Tuple | ast.List | ast.Dict)


def constants_in(tree: ast.Module) -> dict[str, set[str]]:
    """``NAME -> {string}`` for upper-case constants of a module and its classes (tuple unpacking too)."""
    found: dict[str, set[str]] = {}
    bodies = [tree.body, *(n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
    for body in bodies:
        for node in body:
            if isinstance(node, ast.Assign):
                pairs: list[tuple[ast.expr, ast.expr | None]] = []
                for target in node.targets:
                    if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                        pairs.extend(zip(target.elts, node.value.elts, strict=False))
                    else:
                        pairs.append((target, node.value))
            elif isinstance(node, ast.AnnAssign):
                pairs = [(node.target, node.value)]
            else:
                continue
            for target, value in pairs:
                if isinstance(target, ast.Name) and target.id.lstrip("_").isupper() and value is not None:
                    strings = _deep_strings(value) if _is_collection(value) else _strings(value)
                    found.setdefault(target.id, set()).update(strings)
    return found


def reasons_in(source: str, constants: dict[str, set[str]] | None = None) -> set[str]:
    """The condition reasons ``source`` can set (see :func:`reason_sites`)."""
    return {name for name, _ in reason_sites(source, constants)}


def reason_sites(source: str, constants: dict[str, set[str]] | None = None) -> list[tuple[str, int]]:
    """The condition reasons ``source`` can set (see the module docstring for where they are looked for).

    ``constants`` maps upper-case names defined elsewhere (other modules) to their strings, so a
    reason imported as a constant is resolved too; the module's own constants are always used.
    """
    tree = ast.parse(source)
    known = {**(constants or {}), **constants_in(tree)}  # the module's own constants win
    found: list[tuple[str, int]] = []

    def values(node: ast.expr | None) -> Iterator[str]:
        yield from _strings(node)
        if isinstance(node, ast.Name) or (isinstance(node, ast.Attribute) and not _is_class_member(node)):
            yield from known.get(_call_name(node), ())
        elif isinstance(node, ast.IfExp):
            yield from values(node.body)
            yield from values(node.orelse)
        elif isinstance(node, ast.BoolOp):
            for value in node.values:
                yield from values(value)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            args = list(node.args)
            named = _call_name(node.func)
            for i, arg in enumerate(args):
                followed_by_message = i + 1 < len(args) and _is_message(args[i + 1])
                if named in REASON_CALLS or followed_by_message:
                    found.extend((v, node.lineno) for v in values(arg))
            if named in CONDITION_SHORTHANDS and len(args) >= 2:
                found.extend((v, node.lineno) for v in values(args[1]))
            for kw in node.keywords:
                if kw.arg and _is_reason_name(kw.arg):
                    found.extend((v, node.lineno) for v in values(kw.value))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [n for t in targets for n in _target_names(t)]
            if any(_is_reason_name(n) for n in names):
                found.extend((v, node.lineno) for v in values(node.value))
            if any("REASON" in n for n in names) and node.value is not None:
                found.extend((v, node.lineno) for v in _deep_strings(node.value))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "reason":
                    found.extend((v, node.lineno) for v in values(value))
        elif isinstance(node, ast.Tuple | ast.List):
            elts = node.elts
            if any(_is_enum_member(e) for e in elts):
                for element in elts:
                    found.extend((v, node.lineno) for v in values(element))
            for i, element in enumerate(elts[:-1]):
                if _is_message(elts[i + 1]):
                    found.extend((v, node.lineno) for v in values(element))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_reason_name(_call_name(s)) for s in sides if isinstance(s, ast.Name | ast.Attribute)) or any(
                isinstance(s, ast.Call)
                and _call_name(s.func) == "get"
                and s.args
                and _strings(s.args[0])
                and "reason" in set(_strings(s.args[0]))
                for s in sides
            ):
                for side in sides:
                    found.extend((v, node.lineno) for v in values(side))
                    if isinstance(side, ast.Tuple | ast.List | ast.Set):
                        for element in side.elts:
                            found.extend((v, node.lineno) for v in values(element))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defaults = zip(reversed(node.args.args), reversed(node.args.defaults), strict=False)
            kw_defaults = zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True)
            for arg, default in [*defaults, *kw_defaults]:
                if default is not None and _is_reason_name(arg.arg):
                    found.extend((v, node.lineno) for v in values(default))
    return sorted({(r, line) for r, line in found if REASON.match(r)})


def all_constants(files: Iterable[Path] | None = None) -> dict[str, set[str]]:
    """Upper-case string constants of every module, merged by name."""
    merged: dict[str, set[str]] = {}
    for path in files if files is not None else source_files():
        for name, values in constants_in(ast.parse(path.read_text(encoding="utf-8"))).items():
            merged.setdefault(name, set()).update(values)
    return merged


def code_reasons() -> dict[str, list[str]]:
    """Every condition reason the core and the shipped plugins can set, with the files that set it."""
    constants = all_constants()
    return scan(lambda source: reasons_in(source, constants))


def code_reason_sites() -> dict[str, list[str]]:
    """Every condition reason with the ``file:line`` places that set it."""
    constants = all_constants()
    found: dict[str, list[str]] = {}
    for path in source_files():
        for name, line in reason_sites(path.read_text(encoding="utf-8"), constants):
            found.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{line}")
    return found


# ---------------------------------------------------------------------------
# Environment variables
# ---------------------------------------------------------------------------

_ENV_HOLDERS = frozenset({"env", "environ", "environment"})


def _is_environ(node: ast.expr) -> bool:
    """``os.environ``, ``environ`` or a mapping called ``env``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ"
    return isinstance(node, ast.Name) and node.id in _ENV_HOLDERS


def env_vars_in(source: str, constants: dict[str, set[str]] | None = None) -> set[str]:
    """Environment variables ``source`` reads.

    ``os.environ.get(X)``, ``os.environ[X]``, ``os.getenv(X)``, ``env.get(X)`` / ``env[X]`` on a
    mapping called ``env``, a helper called with such a mapping and a name (``_seconds(env, "X")``),
    and module constants called ``ENV_*`` / ``*_ENV`` holding a name. ``X`` may be a constant.
    """
    tree = ast.parse(source)
    known = {**(constants or {}), **constants_in(tree)}  # the module's own constants win
    found: set[str] = set()

    def names(node: ast.expr) -> set[str]:
        got = set(_strings(node))
        if isinstance(node, ast.Name | ast.Attribute):
            got |= known.get(_call_name(node), set())
        return {n for n in got if ENV_NAME.match(n)}

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value) and node.args:
                found |= names(node.args[0])
            elif _call_name(func) == "getenv" and node.args:
                found |= names(node.args[0])
            elif any(_is_environ(a) for a in node.args):
                for arg in node.args:
                    found |= names(arg)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and _is_environ(node.value):
            found |= names(node.slice)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and (target.id.startswith("ENV_") or target.id.endswith("_ENV")):
                    found |= {n for n in _strings(node.value) if ENV_NAME.match(n)}
    return found


def code_env_vars(*, test_support: bool = True) -> dict[str, list[str]]:
    """Every environment variable the core and the plugins read, with the files that read it."""
    files = source_files(test_support=test_support)
    constants = all_constants(files)
    return scan(lambda source: env_vars_in(source, constants), files)


# ---------------------------------------------------------------------------
# Prometheus metric families
# ---------------------------------------------------------------------------

METRIC_TYPES = frozenset(
    {
        "Counter",
        "Gauge",
        "Histogram",
        "Summary",
        "Info",
        "Enum",
        "CounterMetricFamily",
        "GaugeMetricFamily",
        "HistogramMetricFamily",
        "SummaryMetricFamily",
        "InfoMetricFamily",
        "StateSetMetricFamily",
        "GaugeHistogramMetricFamily",
        "UnknownMetricFamily",
        "Metric",
    }
)


def metric_families_in(source: str) -> set[str]:
    """Names of the metric families ``source`` creates: the first argument (or ``name=``) of a metric type."""
    tree = ast.parse(source)
    constants = constants_in(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) in METRIC_TYPES:
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if first is None:
                continue
            values = set(_strings(first))
            if isinstance(first, ast.Name):
                values |= constants.get(first.id, set())
            found |= {v for v in values if re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", v)}
    return found


# ---------------------------------------------------------------------------
# CLI commands
# ---------------------------------------------------------------------------


def cli_commands(parser: argparse.ArgumentParser, prefix: str = "aim-engine") -> list[str]:
    """Every leaf command of ``parser``: ``aim-engine crds``, ``aim-engine artifact download``, ..."""
    found: list[str] = []
    for action in parser._actions:  # noqa: SLF001 - argparse has no public way to list subparsers
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, sub in action.choices.items():
                nested = cli_commands(sub, f"{prefix} {name}")
                found.extend(nested or [f"{prefix} {name}"])
    return found


def cli_options(parser: argparse.ArgumentParser) -> list[str]:
    """The long options of one command (``--workers``), or the short one when it has none."""
    found = []
    for action in parser._actions:  # noqa: SLF001
        if not action.option_strings or action.dest == "help":
            continue
        longs = [o for o in action.option_strings if o.startswith("--")]
        found.append(longs[0] if longs else action.option_strings[0])
    return found


def subparser(parser: argparse.ArgumentParser, *path: str) -> argparse.ArgumentParser:
    """The parser of ``aim-engine <path...>``."""
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
        parser = action.choices[name]
    return parser


# ---------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------


def table_first_cells(markdown: str) -> set[str]:
    """The backticked names that are the whole first cell of a table row: ``| `Name` | ...``."""
    found = set()
    for line in markdown.splitlines():
        match = re.match(r"^\s*\|\s*`([^`|]+)`\s*\|", line)
        if match:
            found.add(match.group(1).strip())
    return found


def heading_code_spans(markdown: str) -> list[str]:
    """Every backticked span in a markdown heading (``#`` lines outside code fences)."""
    spans: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and re.match(r"^#{1,6}\s", line):
            spans.extend(s.strip() for s in re.findall(r"`([^`]+)`", line))
    return spans
