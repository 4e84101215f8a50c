"""A failed registry request as a :class:`RegistryError`: kind, reason, a message that says what to do.

The message names the registry (or its token service) and the image, never the
credentials: anything echoed back is redacted. ``403`` with
``X-RateLimit-Remaining: 0`` (GitHub's used-up API quota) is a rate limit, not an
auth failure.
"""

from __future__ import annotations

import json
import socket
import ssl
import time
from typing import TYPE_CHECKING

import httpx

from aim_core.registry.errors import RegistryError, redact
from aim_core.registry.headers import parse_challenge

if TYPE_CHECKING:
    from aim_core.plugin.providers import RegistryCredentials

__all__ = ["error_detail", "network_error", "quota_exhausted", "redact_credentials", "reset_wait", "response_error"]

_MAX_ERROR_BODY = 64 * 1024


def network_error(
    registry: str, exc: httpx.TransportError, image: str, credentials: RegistryCredentials | None
) -> RegistryError:
    """A failure to reach ``registry``: DNS, refused connection, TLS or another network error."""
    reason, what = "NetworkError", "network error"
    chain: BaseException | None = exc
    while chain is not None:
        if isinstance(chain, socket.gaierror):
            reason, what = "DNSFailure", "host name could not be resolved"
            break
        if isinstance(chain, ConnectionRefusedError):
            reason, what = "ConnectionRefused", "connection refused"
            break
        if isinstance(chain, ssl.SSLError):
            reason, what = "TLSError", f"TLS failed ({getattr(chain, 'reason', None) or chain})"
            break
        chain = chain.__cause__ or chain.__context__
    if reason == "NetworkError":
        text = str(exc) or type(exc).__name__
        if "Name or service not known" in text or "nodename nor servname" in text:
            reason, what = "DNSFailure", "host name could not be resolved"
        elif "refused" in text.lower():
            reason, what = "ConnectionRefused", "connection refused"
        elif "CERTIFICATE_VERIFY_FAILED" in text or "SSL" in text:
            reason, what = "TLSError", f"TLS failed ({text})"
        else:
            what = f"network error ({type(exc).__name__}: {text})"
    message = f"registry {registry} unreachable for {image}: {what}"
    if reason == "TLSError":
        message += "; to trust a private CA set AIM_ENGINE_REGISTRY_CA_FILE"
    return RegistryError(
        "unavailable", redact_credentials(message, credentials), registry=registry, image=image, reason=reason
    )


async def response_error(
    registry: str,
    response: httpx.Response,
    image: str,
    credentials: RegistryCredentials | None,
    *,
    retry_after: float | None = None,
    token_service: bool = False,
) -> RegistryError:
    """The :class:`RegistryError` a failed answer of ``registry`` (or its token service) stands for."""
    status = response.status_code
    detail = await error_detail(response)
    where = f"token service of registry {registry}" if token_service else f"registry {registry}"
    suffix = f" ({detail})" if detail else ""
    if quota_exhausted(response):
        kind, reason = "rate_limited", "RateLimited"
        after = f"; retry after {retry_after:g}s" if retry_after is not None else ""
        message = f"{where} is rate limiting requests for {image} ({status}, quota used up){after}{suffix}"
    elif status in (401, 403):
        kind, reason = "auth", "Unauthorized" if status == 401 else "Forbidden"
        hint = "credentials were refused" if credentials else "anonymous access was refused; add a pull secret"
        challenge = parse_challenge(response.headers.get("WWW-Authenticate", ""))
        if challenge is not None and challenge.params.get("error") == "insufficient_scope":
            hint = (
                "these credentials may not read it" if credentials else "it needs credentials"
            ) + " (or the repository does not exist)"
        message = f"{where} answered {status} for {image}: {hint}{suffix}"
    elif status == 404:
        kind, reason = "not_found", "ImageNotFound"
        message = f"{where} has no {image} (404){suffix}"
    elif status == 429:
        kind, reason = "rate_limited", "RateLimited"
        after = f"; retry after {retry_after:g}s" if retry_after is not None else ""
        message = f"{where} is rate limiting requests for {image} (429){after}{suffix}"
    elif status >= 500:
        kind, reason = "unavailable", "ServiceUnavailable" if status == 503 else "ServerError"
        message = f"{where} failed with {status} for {image}{suffix}"
    else:
        kind, reason = "invalid", "ClientError"
        message = f"{where} refused the request for {image} with {status}{suffix}"
    return RegistryError(
        kind,
        redact_credentials(message, credentials),
        registry=registry,
        image=image,
        reason=reason,
        retry_after=retry_after,
        status=status,
        anonymous=kind == "auth" and not credentials,
    )


def quota_exhausted(response: httpx.Response) -> bool:
    """A ``403`` that is a used-up API quota (``X-RateLimit-Remaining: 0``), as GitHub sends it."""
    return response.status_code == 403 and response.headers.get("X-RateLimit-Remaining", "").strip() == "0"


def reset_wait(response: httpx.Response) -> float | None:
    """Seconds until ``X-RateLimit-Reset`` (a unix time)."""
    try:
        return max(0.0, float(response.headers["X-RateLimit-Reset"]) - time.time())
    except (KeyError, ValueError):
        return None


def redact_credentials(message: str, credentials: RegistryCredentials | None) -> str:
    if credentials is None:
        return message
    return redact(message, (credentials.password, credentials.token, credentials.username))


async def error_detail(response: httpx.Response) -> str:
    """``MANIFEST_UNKNOWN: manifest unknown`` from an OCI error body, else a short text."""
    try:
        body = await response.aread()
    except httpx.HTTPError:
        return ""
    body = body[:_MAX_ERROR_BODY]
    try:
        data = json.loads(body)
    except ValueError:
        text = body.decode("utf-8", "replace").strip()
        return text[:200] if text and not text.lstrip().startswith("<") else ""
    errors = data.get("errors") if isinstance(data, dict) else None
    if isinstance(errors, list) and errors:
        parts = []
        for err in errors[:3]:
            if isinstance(err, dict):
                code, msg = err.get("code", ""), err.get("message", "")
                parts.append(f"{code}: {msg}" if code and msg else str(code or msg))
        return "; ".join(p for p in parts if p)[:300]
    if isinstance(data, dict):
        for key in ("message", "detail", "error"):
            if isinstance(data.get(key), str):
                return data[key][:300]
    return ""
