"""A small Dockerfile reader, enough to check our two Dockerfiles without a Docker engine.

It follows the Dockerfile reference for what our files use: comments and parser
directives, ``\\`` line continuations, stages (``FROM image [AS name]``), ``ARG`` with
defaults, ``ENV`` in both forms (``k=v ...`` with quotes, and the legacy ``k v``),
``USER``, ``WORKDIR``, ``COPY [--from=stage] src... dest``, and the exec (JSON) and
shell forms of ``RUN``/``ENTRYPOINT``/``CMD``. ``$VAR`` and ``${VAR}`` are expanded from
ARG defaults and ENV when asked for (:meth:`Stage.expand`).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import attrs

__all__ = ["Dockerfile", "Instruction", "Stage"]

_FLAGGED = frozenset({"ADD", "COPY", "RUN", "HEALTHCHECK"})  # instructions that take --flags
_VAR = re.compile(r"\$(?:\{(\w+)(?::-([^}]*))?\}|(\w+))")


@attrs.frozen
class Instruction:
    op: str  #: upper case, e.g. ``COPY``
    args: str  #: the rest of the line, continuations joined
    line: int  #: 1-based line of the instruction's first line

    def flags(self) -> dict[str, str]:
        """``--from=build --chown=1:1`` -> ``{"from": "build", "chown": "1:1"}``."""
        found: dict[str, str] = {}
        if self.op not in _FLAGGED:
            return found
        for word in self.args.split():
            if not word.startswith("--"):
                break
            key, _, value = word[2:].partition("=")
            found[key] = value
        return found

    def words(self) -> list[str]:
        """The arguments after any ``--flags``: the JSON array, or the shell-split words."""
        rest = self.args
        while self.op in _FLAGGED and rest.startswith("--"):
            rest = rest.split(None, 1)[1] if " " in rest else ""
        if rest.lstrip().startswith("["):
            value = json.loads(rest)
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"line {self.line}: {self.op} exec form must be a JSON array of strings")
            return value
        return shlex.split(rest)

    def is_exec_form(self) -> bool:
        return self.args.lstrip().startswith("[")


@attrs.define
class Stage:
    base: str
    name: str | None
    index: int
    instructions: list[Instruction] = attrs.field(factory=list)
    args: dict[str, str] = attrs.field(factory=dict)  #: ARG defaults visible in this stage

    def all(self, op: str) -> list[Instruction]:
        return [i for i in self.instructions if i.op == op]

    def last(self, op: str) -> Instruction | None:
        found = self.all(op)
        return found[-1] if found else None

    def env(self) -> dict[str, str]:
        """The environment the stage's ENV instructions set, in order (later wins)."""
        env: dict[str, str] = {}
        for instruction in self.all("ENV"):
            words = shlex.split(instruction.args)
            if words and "=" not in words[0]:  # legacy form: ENV key value with spaces
                env[words[0]] = self.expand(instruction.args.split(None, 1)[1].strip(), env)
                continue
            for word in words:
                key, sep, value = word.partition("=")
                if not sep:
                    raise ValueError(f"line {instruction.line}: ENV {word!r} has no '='")
                env[key] = self.expand(value, env)
        return env

    def expand(self, text: str, env: dict[str, str] | None = None) -> str:
        values = {**self.args, **(env or {})}

        def one(match: re.Match[str]) -> str:
            name = match[1] or match[3]
            if name in values:
                return values[name]
            return match[2] if match[2] is not None else ""

        return _VAR.sub(one, text)


@attrs.define
class Dockerfile:
    path: Path
    stages: list[Stage]
    global_args: dict[str, str]

    @classmethod
    def read(cls, path: str | Path) -> Dockerfile:
        path = Path(path)
        stages: list[Stage] = []
        global_args: dict[str, str] = {}
        for instruction in _instructions(path.read_text()):
            if instruction.op == "FROM":
                words = instruction.args.split()
                name = words[2] if len(words) >= 3 and words[1].lower() == "as" else None
                base = Stage("", None, -1, args=global_args).expand(words[0])
                stages.append(Stage(base=base, name=name, index=len(stages)))
                continue
            if instruction.op == "ARG":
                key, sep, value = instruction.args.strip().partition("=")
                value = shlex.split(value)[0] if sep and value.strip() else ""
                if not stages:
                    global_args[key] = value
                else:
                    stages[-1].args[key] = value if sep else global_args.get(key, "")
            if not stages:
                if instruction.op != "ARG":
                    raise ValueError(f"{path}:{instruction.line}: {instruction.op} before the first FROM")
                continue
            stages[-1].instructions.append(instruction)
        if not stages:
            raise ValueError(f"{path}: no FROM")
        return cls(path, stages, global_args)

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    def stage(self, ref: str) -> Stage | None:
        """A stage by name or index, as ``COPY --from`` names it."""
        for stage in self.stages:
            if stage.name == ref or str(stage.index) == ref:
                return stage
        return None


def _instructions(text: str) -> list[Instruction]:
    found: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue  # comment lines inside a continued instruction are dropped
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        joined = " ".join(p for p in pending if p)
        pending = []
        op, _, args = joined.partition(" ")
        found.append(Instruction(op.upper(), args.strip(), start))
    if pending:
        raise ValueError(f"line {start}: the file ends inside a continued instruction")
    return found
