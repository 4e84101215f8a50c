"""Outbound TLS: standard trust, SSL_CERT_FILE/SSL_CERT_DIR, a private CA (AIM_DOWNLOADER_CA_FILE)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator

import pytest

from aim_core.downloader.sources import DownloadError, Failure
from aim_core.downloader.tls import trust_env
from aim_testing.hubserver import HubServer
from aim_testing.tlsfiles import TlsFiles
from tests.downloader.conftest import base_env, run


@pytest.fixture()
def tls_hub(tls: TlsFiles) -> Iterator[HubServer]:
    with HubServer(ssl_context=tls.server_context()) as server:
        server.add_repo("org/model", {"config.json": b"{}", "model.safetensors": b"w" * 4096})
        yield server


async def test_a_hub_behind_a_private_ca_is_refused_by_default(tmp_path, tls_hub):
    result = await run(["check-size", "hf://org/model"], base_env(tmp_path, HF_ENDPOINT=tls_hub.url))

    assert result.code == Failure.OTHER.value
    assert "CERTIFICATE_VERIFY_FAILED" in result.stderr or "certificate verify failed" in result.stderr
    assert result.stdout == ""


async def test_the_private_ca_option_makes_it_trusted_for_size_and_download(tmp_path, tls_hub, tls):
    env = base_env(tmp_path, HF_ENDPOINT=tls_hub.url, AIM_DOWNLOADER_CA_FILE=str(tls.ca_file))

    size = await run(["check-size", "hf://org/model"], env)
    download = await run(["download", "hf://org/model"], env)

    assert size.code == 0, size.stderr
    assert json.loads(size.stdout.splitlines()[-1])["sizeBytes"] == 4098
    assert download.code == 0, download.stderr
    assert (tmp_path / "cache" / "model.safetensors").read_bytes() == b"w" * 4096


@pytest.mark.parametrize("variable", ["SSL_CERT_FILE", "SSL_CERT_DIR"])
async def test_ssl_cert_file_and_dir_are_honoured(tmp_path, tls_hub, tls, variable):
    folder = tmp_path / "certs"
    folder.mkdir()
    shutil.copy(tls.ca_file, folder / "private-ca.pem")
    value = str(folder / "private-ca.pem") if variable == "SSL_CERT_FILE" else str(folder)

    result = await run(
        ["check-size", "hf://org/model"], base_env(tmp_path, HF_ENDPOINT=tls_hub.url, **{variable: value})
    )

    assert result.code == 0, result.stderr


def test_the_bundle_keeps_the_standard_trust_and_reaches_every_client(tmp_path, tls):
    env = {"AIM_DOWNLOADER_CA_FILE": str(tls.ca_file)}

    bundle = trust_env(env, str(tmp_path))

    assert bundle is not None
    text = open(bundle).read()
    assert tls.ca_file.read_text().strip() in text
    assert text.count("BEGIN CERTIFICATE") > 1  # the system's authorities are still there
    assert env["SSL_CERT_FILE"] == env["AWS_CA_BUNDLE"] == env["REQUESTS_CA_BUNDLE"] == bundle


def test_without_custom_trust_nothing_changes(tmp_path):
    env: dict[str, str] = {}
    assert trust_env(env, str(tmp_path)) is None
    assert env == {}


def test_an_unreadable_private_ca_is_an_invalid_setting(tmp_path):
    (tmp_path / "not-a-cert.pem").write_text("hello")
    for value in (str(tmp_path / "missing.pem"), str(tmp_path / "not-a-cert.pem")):
        with pytest.raises(DownloadError) as caught:
            trust_env({"AIM_DOWNLOADER_CA_FILE": value}, str(tmp_path))
        assert caught.value.kind is Failure.INVALID
