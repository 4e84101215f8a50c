"""The Dockerfile reader of tests/test_images.py on the constructs the reference describes."""

from __future__ import annotations

import pytest

from aim_testing.dockerfile import Dockerfile

SAMPLE = r"""# syntax=docker/dockerfile:1
ARG BASE=python:3.11-slim
FROM ${BASE} AS build
ARG PLUGINS="a b"
ARG BASE
RUN for p in $PLUGINS; do \
      # a comment inside a continuation
      echo $p; \
    done
COPY --chown=1:1 pyproject.toml README.md ./

FROM $BASE
COPY --from=build /opt/x /opt/x
ENV PATH=/opt/x/bin:$PATH A="two words" \
    B=${A}-b C=${MISSING:-fallback}
ENV LEGACY value with spaces
USER 65532:65532
ENTRYPOINT ["tool", "run"]
CMD --flag value
"""


@pytest.fixture()
def image(tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text(SAMPLE)
    return Dockerfile.read(path)


def test_stages_args_and_continuations(image):
    build, final = image.stages
    assert (build.base, build.name, final.base, final.name) == ("python:3.11-slim", "build", "python:3.11-slim", None)
    assert build.args == {"PLUGINS": "a b", "BASE": "python:3.11-slim"}
    run = build.last("RUN")
    assert run.args == "for p in $PLUGINS; do echo $p; done" and run.line == 6
    assert image.stage("build") is build and image.stage("0") is build and image.final is final


def test_env_in_both_forms_with_expansion(image):
    assert image.final.env() == {
        "PATH": "/opt/x/bin:",
        "A": "two words",
        "B": "two words-b",
        "C": "fallback",
        "LEGACY": "value with spaces",
    }


def test_copy_flags_and_words_and_command_forms(image):
    copy = image.stages[0].last("COPY")
    assert copy.flags() == {"chown": "1:1"} and copy.words() == ["pyproject.toml", "README.md", "./"]
    assert image.final.last("COPY").flags() == {"from": "build"}
    assert image.final.last("ENTRYPOINT").is_exec_form() and image.final.last("ENTRYPOINT").words() == ["tool", "run"]
    assert not image.final.last("CMD").is_exec_form() and image.final.last("CMD").words() == ["--flag", "value"]
    assert image.final.last("USER").args == "65532:65532"


@pytest.mark.parametrize(
    "text, message",
    [
        ("RUN echo\n", "before the first FROM"),
        ("FROM x\nRUN a \\\n", "ends inside"),
        ("", "no FROM"),
    ],
)
def test_broken_files_are_refused(tmp_path, text, message):
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        Dockerfile.read(path)
