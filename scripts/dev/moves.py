"""The module moves of the one-package-per-kind layout (issue 21), old dotted path -> new.

`python scripts/dev/moves.py FILE...` rewrites imports and dotted references in the given
files (a branch started before the move runs it over the files it added). `--apply` also
performs the `git mv`s; that was done once, on main.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

MOVES: dict[str, str] = {
    # the runtime every controller runs on
    "aim_core.engine": "aim_core.runtime.engine",
    "aim_core.controller": "aim_core.runtime.controller",
    "aim_core.storeform": "aim_core.runtime.storeform",
    "aim_core.store": "aim_core.runtime.store",
    "aim_core.workqueue": "aim_core.runtime.workqueue",
    "aim_core.applyset": "aim_core.runtime.applyset",
    "aim_core.eventstore": "aim_core.runtime.eventstore",
    "aim_core.outcomes": "aim_core.runtime.outcomes",
    "aim_core.operator.leader": "aim_core.runtime.leader",
    "aim_core.operator.reflector": "aim_core.runtime.reflector",
    # the plugin host
    "aim_core.hookspecs": "aim_core.plugin.hookspecs",
    "aim_core.plugins": "aim_core.plugin.manager",
    "aim_core.providers": "aim_core.plugin.providers",
    # one package per kind
    "aim_core.controllers.services": "aim_core.service.controller",
    "aim_core.controllers.models": "aim_core.model.controller",
    "aim_core.controllers.templates": "aim_core.template.controller",
    "aim_core.controllers.templatecaches": "aim_core.templatecache.controller",
    "aim_core.controllers.artifacts": "aim_core.artifact.controller",
    "aim_core.controllers.modelsources": "aim_core.modelsource.controller",
    "aim_core.controllers.runtimeconfigs": "aim_core.runtimeconfig.controller",
    "aim_core.runtimeconfig": "aim_core.runtimeconfig.resolve",
    "aim_core.controllers": "aim_core.operator.controllers",
    # shared domain values and helpers
    "aim_core.gpu": "aim_core.reconcile.gpu",
    "aim_core.health": "aim_core.reconcile.health",
    "aim_core.inspect": "aim_core.reconcile.workloads",
    "aim_core.durations": "aim_core.reconcile.durations",
    "aim_core.resources": "aim_core.reconcile.resources",
    "aim_core.spec_errors": "aim_core.api.spec_errors",
    # CLI features
    "aim_core.describe": "aim_core.cli.chain",
    "aim_core.render": "aim_core.cli.offline",
    "aim_core.operator.runtime": "aim_core.operator.wiring",
    # test machinery (its own distribution since the same change)
    "aim_core.testing": "aim_testing",
    "aim_core.registry.inspection": "aim_core.cli.inspection",
}


def path_of(dotted: str, *, package: bool) -> str:
    base = dotted.replace(".", "/")
    if dotted == "aim_testing":
        return "testing/aim_testing"
    return f"{base}/__init__.py" if package else f"{base}.py"


def _pattern() -> re.Pattern[str]:
    # longest first, so aim_core.controllers.services wins over aim_core.controllers
    names = sorted(MOVES, key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b(?![\w])(?!\.(?:resolve|controller)\b)")


_FROM = re.compile(r"^(\s*)from aim_core import ([^\n(]+|\([^)]*\))", re.M)
_MODULE_NAMES = {old.rsplit(".", 1)[1]: old for old in MOVES if old.count(".") == 1}


def rewrite(text: str) -> str:
    pattern = _pattern()
    out = pattern.sub(lambda m: MOVES[m.group(1)], text)
    # slash paths in docs and comments: aim_core/engine.py -> aim_core/runtime/engine.py
    for old, new in sorted(MOVES.items(), key=lambda kv: len(kv[0]), reverse=True):
        o, n = old.replace(".", "/"), path_of(new, package=False)[:-3]
        out = re.sub(
            re.escape(o) + r"(\.py)?\b(?![\w])(?!/(?:resolve|controller)\b)", lambda m, n=n: n + (m.group(1) or ""), out
        )

    # `from aim_core import store` style imports of moved modules
    def fix_from(m: re.Match[str]) -> str:
        indent, names = m.group(1), m.group(2)
        inner = names.strip("()")
        parts = [p.strip() for p in inner.replace("\n", " ").split(",") if p.strip()]
        moved = [p for p in parts if p.split(" as ")[0].strip() in _MODULE_NAMES]
        if not moved:
            return m.group(0)
        kept = [p for p in parts if p not in moved]
        lines = []
        for p in moved:
            name = p.split(" as ")[0].strip()
            alias = p.split(" as ")[1].strip() if " as " in p else name
            new = MOVES[_MODULE_NAMES[name]]
            parent, leaf = new.rsplit(".", 1)
            lines.append(f"{indent}from {parent} import {leaf}" + (f" as {alias}" if alias != leaf else ""))
        if kept:
            lines.insert(0, f"{indent}from aim_core import {', '.join(kept)}")
        return "\n".join(lines)

    return _FROM.sub(fix_from, out)


def main(argv: list[str]) -> int:
    apply = "--apply" in argv
    files = [a for a in argv if a != "--apply"]
    if apply:
        for old, new in MOVES.items():
            if old == "aim_core.testing":
                continue
            src_pkg, src_mod = Path(path_of(old, package=True)), Path(path_of(old, package=False))
            src = src_pkg if src_pkg.exists() and not src_mod.exists() else src_mod
            if not src.exists():
                continue
            dst = Path(path_of(new, package=False))
            if old == "aim_core.runtimeconfig":
                dst = Path("aim_core/runtimeconfig/resolve.py")
            dst.parent.mkdir(parents=True, exist_ok=True)
            init = dst.parent / "__init__.py"
            subprocess.run(["git", "mv", str(src), str(dst)], check=True)
            if not init.exists():
                init.write_text("")
                subprocess.run(["git", "add", str(init)], check=True)
    for name in files:
        p = Path(name)
        text = p.read_text()
        new = rewrite(text)
        if new != text:
            p.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
