"""One trust store for every outbound client (Hub, S3), written once per run.

By default each library uses its standard trust: ``huggingface_hub`` the system store
(which honours ``SSL_CERT_FILE``/``SSL_CERT_DIR``), botocore its bundled CA list. As soon
as ``SSL_CERT_FILE``, ``SSL_CERT_DIR`` or ``AIM_DOWNLOADER_CA_FILE`` (a private CA, PEM) is
set, the certificates of all of them -- with the system store as the base when
``SSL_CERT_FILE`` does not replace it -- are written into one PEM file and handed to
every client through ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE`` and ``AWS_CA_BUNDLE``, so
the Hub and S3 clients trust exactly the same authorities.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import MutableMapping
from pathlib import Path

from aim_core.downloader.sources import DownloadError, Failure

_BEGIN = "-----BEGIN CERTIFICATE-----"


def trust_env(env: MutableMapping[str, str], tmp_dir: str) -> str | None:
    """Point every client at one bundle when the trust was customised; returns its path (or None)."""
    extra = env.get("AIM_DOWNLOADER_CA_FILE", "")
    cert_file, cert_dir = env.get("SSL_CERT_FILE", ""), env.get("SSL_CERT_DIR", "")
    if not (extra or cert_file or cert_dir):
        return None
    pems: list[str] = []
    if cert_file:
        pems.append(_read_pem(cert_file, "SSL_CERT_FILE"))
    else:
        pems.append(_system_pem())
    if cert_dir:
        folder = Path(cert_dir)
        if not folder.is_dir():
            raise DownloadError(Failure.INVALID, f"SSL_CERT_DIR={cert_dir} is not a directory")
        for entry in sorted(folder.iterdir()):
            if entry.is_file():
                text = entry.read_text(errors="replace")
                if _BEGIN in text:
                    pems.append(text)
    if extra:
        pems.append(_read_pem(extra, "AIM_DOWNLOADER_CA_FILE"))
    bundle = Path(tmp_dir) / "aim-downloader-ca.pem"
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text("\n".join(p.strip() for p in pems if p.strip()) + "\n")
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "AWS_CA_BUNDLE"):
        env[name] = str(bundle)
    env.pop("SSL_CERT_DIR", None)  # folded into the bundle
    return str(bundle)


def _read_pem(path: str, name: str) -> str:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise DownloadError(Failure.INVALID, f"{name}={path} cannot be read: {exc.strerror}") from None
    if _BEGIN not in text:
        raise DownloadError(Failure.INVALID, f"{name}={path} holds no PEM certificate")
    try:
        ssl.create_default_context(cafile=path)
    except ssl.SSLError as exc:
        raise DownloadError(Failure.INVALID, f"{name}={path} is not a valid certificate file: {exc}") from None
    return text


def _system_pem() -> str:
    """The system's CA file (what OpenSSL trusts without SSL_CERT_*), else certifi's."""
    paths = ssl.get_default_verify_paths()
    for candidate in (paths.openssl_cafile, "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"):
        if candidate and os.path.isfile(candidate):
            return Path(candidate).read_text()
    try:
        import certifi
    except ImportError:  # pragma: no cover - certifi comes with botocore/httpx
        return ""
    return Path(certifi.where()).read_text()
