"""Credentials out of container log lines before they reach conditions, Events or operator logs (pure).

Log tails of failed pods (downloads, size checks, discovery, serving) are
quoted in condition messages and Events so a user sees why something failed.
A failing tool may print what it was given: a Hugging Face token, an
``Authorization: Bearer ...`` header, a URL with ``user:password@``, an
environment dump with ``AWS_SECRET_ACCESS_KEY=...``. :func:`redact` replaces
what looks like a credential with ``[REDACTED]`` and leaves the rest of the
line (the part that explains the failure) as it is.

What is recognised: Hugging Face (``hf_...``, ``api_org_...``), GitHub
(``ghp_...`` and kin), AWS access key ids (``AKIA...``/``ASIA...``), Google
OAuth tokens (``ya29....``), Slack tokens, JWTs; ``Bearer``/``Basic``
credentials; the password of ``scheme://user:password@host``; signed-URL
query parameters (``X-Amz-Signature``, ``X-Amz-Credential``,
``X-Amz-Security-Token``, ``sig``, ``token``, ``access_token``, ...); and the
value of any ``NAME=value`` or ``NAME: value`` whose name says it is a secret
(``...SECRET...``, ``...TOKEN...``, ``...PASSWORD...``, ``...API_KEY...``,
``...ACCESS_KEY...``, ``...CREDENTIAL...``), also as a JSON or Python mapping
entry (``"password": "..."``); the value of a command-line flag with such a name
(``--api-key VALUE``, ``--hf-token=VALUE``, ``'--token', 'VALUE'`` in a printed
argument list), as tools echo the command they were started with (the
operator itself passes the benchmark endpoint's key as ``--api-key``); and
OpenAI-style keys (``sk-...``, ``sk-proj-...``) wherever they stand.
"""

from __future__ import annotations

import re

__all__ = ["MARK", "redact"]

MARK = "[REDACTED]"

# a name with a word that says secret: HF_TOKEN, AWS_SECRET_ACCESS_KEY, db.password (not max_tokens, tokenizer)
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:secret|token|passw(?:or)?d|pwd|api[_-]?key|access[_-]?key|credentials?"
    r"|private[_-]?key)(?:[_.-][A-Za-z0-9]+)*"
)

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # scheme://user:password@host -> keep the user, drop the password
    (re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:)[^\s/@]+(?=@)"), rf"\g<head>{MARK}"),
    # Authorization schemes
    (re.compile(r"(?i)(?P<head>\b(?:bearer|basic)\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{6,}"), rf"\g<head>{MARK}"),
    # signed URLs and token query parameters
    (
        re.compile(
            r"(?i)(?P<head>[?&](?:x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature|token"
            r"|access_token|api_key|apikey|key|password|secret)=)[^&\s\"'#]+"
        ),
        rf"\g<head>{MARK}",
    ),
    # "password": "...", 'token': '...'
    (re.compile(rf"(?i)(?P<head>([\"']){_SECRET_NAME}\2\s*:\s*)([\"'])(?:(?!\3).)+\3"), rf"\g<head>\3{MARK}\3"),
    # --api-key VALUE, --hf-token=VALUE, '--token', 'VALUE' (a command line echoed by a tool or a shell's -x);
    # a next flag is not a value, and "none" is what a tool is given when there is no key
    (
        re.compile(
            rf"(?i)(?P<head>(?<![A-Za-z0-9_-])--?{_SECRET_NAME}(?:\s*=\s*|\s+|[\"'],\s*[\"']))"
            r"(?!\[REDACTED\])(?!-)(?!(?:none|null)\b)(?:\"[^\"]*\"|'[^']*'|[^\s\"',;]+)"
        ),
        rf"\g<head>{MARK}",
    ),
    # NAME=value, NAME: value (environment dumps, settings printed by a tool)
    (
        re.compile(
            rf"(?i)(?P<head>(?<![A-Za-z0-9_.-]){_SECRET_NAME}\s*[=:]\s*)(?!\[REDACTED\])"
            r"(?:\"[^\"]*\"|'[^']*'|[^\s\"',;]+)"
        ),
        rf"\g<head>{MARK}",
    ),
    # tokens recognisable by their shape, wherever they stand
    (
        re.compile(
            r"\b(?:hf_[A-Za-z0-9_-]{8,}|api_org_[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}"
            r"|github_pat_[A-Za-z0-9_]{16,}|(?:AKIA|ASIA)[A-Z0-9]{16}|ya29\.[A-Za-z0-9._-]{10,}"
            r"|xox[abposr]-[A-Za-z0-9-]{10,}|sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"
        ),
        MARK,
    ),
)


def redact(text: str | None) -> str:
    """``text`` with every credential it seems to hold replaced by ``[REDACTED]``."""
    if not text:
        return text or ""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text
