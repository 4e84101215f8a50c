"""Credentials that expire: token files read again, exec plugins run again, 401 as a health signal.

On both backends (``kube.accept_tokens``): a token not in the set is answered 401, as the API server
answers a revoked or expired one (the emulator itself; kube-apiserver through the test token-review
webhook, asked on every request: :mod:`aim_testing.tokenwebhook`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from aim_core.kube import Kube
from aim_core.operator import login
from aim_core.operator.probes import Readiness
from aim_core.reconcile.errors import ApiError
from aim_core.reconcile.resources import NAMESPACES
from tests.operator.test_cli_run import LOOPBACK_ENDPOINTS
from tests.wire.conftest import eventually

RC = "aim.eai.amd.com/v1alpha1/aimruntimeconfigs"


def write_kubeconfig(path: Path, server: str, user: dict, ca: Path | None = None) -> Path:
    cluster = {"server": server, **({"certificate-authority": str(ca)} if ca else {})}
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "emulator",
                "clusters": [{"name": "emulator", "cluster": cluster}],
                "users": [{"name": "emulator", "user": user}],
                "contexts": [{"name": "emulator", "context": {"cluster": "emulator", "user": "emulator"}}],
            }
        )
    )
    return path


def exec_plugin(tmp_path: Path, lifetime: float) -> tuple[dict, Path]:
    """A kubeconfig ``exec`` user whose plugin hands out ``t1``, ``t2``, ... each valid for ``lifetime`` seconds.

    The plugin appends every token it issues to ``issued`` (returned), so a test can revoke older ones;
    a number in the file ``lifetime`` beside it changes the lifetime of the tokens it issues next.
    """
    issued = tmp_path / "issued"
    script = tmp_path / "plugin.py"
    script.write_text(
        textwrap.dedent(f"""
        import datetime, json, pathlib, time
        issued = pathlib.Path({str(issued)!r})
        n = len(issued.read_text().splitlines()) + 1 if issued.exists() else 1
        with issued.open("a") as f:
            f.write(f"t{{n}} {{time.time()}}\\n")
        lifetime = pathlib.Path({str(tmp_path / "lifetime")!r})
        seconds = float(lifetime.read_text()) if lifetime.exists() else {lifetime}
        expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
        print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                          "status": {{"token": f"t{{n}}", "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}}}}))
    """)
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }
    return user, issued


def certificate_plugin(tmp_path: Path, ca_cert: Path, ca_key: Path, lifetime: float) -> tuple[dict, Path]:
    """An ``exec`` user whose plugin returns a new client certificate (``system:masters``) valid for ``lifetime`` s.

    Issued from the test control plane's client CA; each certificate's number goes to ``issued``.
    """
    issued = tmp_path / "issued"
    script = tmp_path / "cert_plugin.py"
    script.write_text(
        textwrap.dedent(f"""
        import datetime, json, pathlib, time, trustme
        issued = pathlib.Path({str(issued)!r})
        n = len(issued.read_text().splitlines()) + 1 if issued.exists() else 1
        with issued.open("a") as f:
            f.write(f"c{{n}} {{time.time()}}\\n")
        ca = trustme.CA.from_pem(pathlib.Path({str(ca_cert)!r}).read_bytes(), pathlib.Path({str(ca_key)!r}).read_bytes())
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        expires = now + datetime.timedelta(seconds={lifetime})
        cert = ca.issue_cert("aim-exec-user", common_name=f"aim-exec-user-{{n}}", organization_name="system:masters",
                             not_before=now - datetime.timedelta(minutes=1), not_after=expires)
        print(json.dumps({{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                          "status": {{"clientCertificateData": cert.cert_chain_pems[0].bytes().decode(),
                                      "clientKeyData": cert.private_key_pem.bytes().decode(),
                                      "expirationTimestamp": expires.strftime("%Y-%m-%dT%H:%M:%SZ")}}}}))
    """)
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }
    return user, issued


def issued_at(issued: Path) -> dict[str, float]:
    """Token -> when the plugin issued it."""
    lines = issued.read_text().splitlines() if issued.exists() else []
    return {token: float(at) for token, at in (line.split() for line in lines)}


def tokens(issued: Path) -> list[str]:
    return list(issued_at(issued))


async def test_a_token_file_ending_in_a_newline_is_trimmed(kube, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("sekret\n")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": str(token_file)})
    kube.accept_tokens({"sekret"})
    creds = login.credentials(str(config))
    assert creds.token == "sekret"
    assert creds.token_file == str(token_file)
    client = Kube(creds)
    try:
        assert await client.get(NAMESPACES, None, "absent") is None  # no "Forbidden control character"
    finally:
        await client.aclose()


async def test_a_rotated_token_file_is_read_again_when_the_old_token_is_refused(kube, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("old\n")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": "token"})  # relative to the kubeconfig
    kube.accept_tokens({"old"})
    client = Kube(login.credentials(str(config)))
    try:
        await client.list(NAMESPACES)
        token_file.write_text("new\n")  # a sidecar (or the kubelet) rotates it and the old one is revoked
        kube.accept_tokens({"new"})
        await client.list(NAMESPACES)  # refused once, read again, sent again
        assert kube.unauthorized() == 1
        assert client.auth.refused_for() is None
        kube.put_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rotated"}})
        events = [e async for e in client.watch(NAMESPACES, timeout_seconds=1)]  # watches carry it too
        assert all(e["type"] in ("ADDED", "BOOKMARK") for e in events)
        assert "rotated" in {e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"}, events
    finally:
        await client.aclose()


async def test_a_token_file_is_read_again_every_minute_without_a_refusal(kube, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("first")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": str(token_file)})
    kube.accept_tokens({"first", "second"})
    client = Kube(login.credentials(str(config)))
    client.auth.reread_seconds = 0.2  # a minute in production
    try:
        await client.list(NAMESPACES)
        token_file.write_text("second")
        await asyncio.sleep(0.3)
        await client.list(NAMESPACES)
        assert kube.sent()[-1].authorization == "Bearer second"
    finally:
        await client.aclose()


async def test_an_exec_plugin_runs_again_when_its_credential_expires_and_after_a_401(kube, tmp_path):
    user, issued = exec_plugin(tmp_path, lifetime=3)  # whole seconds in expirationTimestamp: 2-3 s
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, user)
    creds = login.credentials(str(config))
    assert creds.token == "t1" and creds.expires is not None
    kube.accept_tokens({"t1"})
    client = Kube(creds)
    try:
        await client.list(NAMESPACES)
        await asyncio.sleep(3.2)  # t1 expired: it is revoked, and the plugin gives t2 before the next request
        (tmp_path / "lifetime").write_text("60")  # t2 outlives what follows (a real server may take 10 s to revoke)
        kube.accept_tokens({"t2"})
        await client.list(NAMESPACES)
        assert tokens(issued) == ["t1", "t2"]
        assert kube.unauthorized() == 0
        kube.accept_tokens({"t3"})  # t2 revoked before its time: the 401 runs the plugin again
        await client.list(NAMESPACES)
        assert tokens(issued) == ["t1", "t2", "t3"]
        assert kube.unauthorized() == 1
    finally:
        await client.aclose()


@pytest.mark.apiserver_only("client certificates: kube-apiserver's x509 authenticator (the emulator serves plain HTTP)")
async def test_an_exec_plugin_that_returns_client_certificates_gets_new_connections_with_each_new_one(kube, tmp_path):
    plane = kube.plane
    user, issued = certificate_plugin(tmp_path, plane.client_ca_cert, plane.client_ca_key, lifetime=3)
    config = write_kubeconfig(tmp_path / "kubeconfig", plane.url, user, ca=plane.ca_file)  # TLS to the server itself
    creds = login.credentials(str(config))
    assert creds.certificate_data and creds.token is None and creds.expires is not None
    client = Kube(creds)
    try:
        assert await client.get(NAMESPACES, None, "default") is not None  # as aim-exec-user-1, system:masters
        await asyncio.sleep(max(0.0, creds.expires - time.time()) + 1.2)  # its certificate expired
        # the server refuses an expired certificate (401): the plugin's next one must be presented,
        # on new connections (the pooled ones were made with the old one)
        assert await client.get(NAMESPACES, None, "default") is not None
        assert tokens(issued) == ["c1", "c2"]
        assert client.auth.refused_for() is None
    finally:
        await client.aclose()


async def test_refused_fresh_credentials_are_an_auth_failure_that_healthz_reports(kube, tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text("revoked")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": str(token_file)})
    kube.accept_tokens({"someone-else"})
    client = Kube(login.credentials(str(config)))
    readiness = Readiness(auth_refused=client.auth.refused_for)
    monkeypatch.setattr("aim_core.operator.probes.AUTH_REFUSED_SECONDS", 0.3)
    try:
        with pytest.raises(ApiError) as refused:
            await client.list(NAMESPACES)
        assert refused.value.status == 401
        assert kube.unauthorized() == 1  # the file read again holds the same token: not sent again
        assert readiness.liveness_problem() is None  # not for long yet
        await asyncio.sleep(0.35)
        with pytest.raises(ApiError):
            await client.list(NAMESPACES)
        assert "refused the operator's credentials" in (readiness.liveness_problem() or "")
        kube.accept_tokens({"revoked"})  # the server takes it again
        await client.list(NAMESPACES)
        assert readiness.liveness_problem() is None
    finally:
        await client.aclose()


def test_in_cluster_credentials_name_the_token_file(monkeypatch, tmp_path):
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("pod-token\n")
    ca.write_text("not read here")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setattr(login, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(login, "SERVICE_CERT_FILENAME", str(ca))
    creds = login._in_cluster()
    assert creds.token == "pod-token"
    assert creds.token_file == str(token)
    assert (creds.server, creds.ca_path) == ("https://10.0.0.1:443", str(ca))


async def test_a_refresh_that_fails_keeps_the_old_credentials(kube, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("kept")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": str(token_file)})
    kube.accept_tokens({"kept"})
    client = Kube(login.credentials(str(config)))
    client.auth.reread_seconds = 0.0
    try:
        token_file.unlink()  # gone for a moment while it is replaced
        await client.list(NAMESPACES)
        assert kube.sent()[-1].authorization == "Bearer kept"
    finally:
        await client.aclose()


# ---------------------------------------------------------------- a running operator, no restart


@contextlib.asynccontextmanager
async def operator_process(kubeconfig: Path, log: Path):
    """``aim-engine run`` as a process of its own with ``kubeconfig``; stopped (SIGTERM) at the end."""
    env = {**os.environ, "KUBECONFIG": str(kubeconfig), "AIM_SYSTEM_NAMESPACE": "aim-system"}
    with open(log, "wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "aim_core.cli",
            "run",
            "-A",
            *LOOPBACK_ENDPOINTS,
            env=env,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            yield proc
        finally:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
                await asyncio.wait_for(proc.wait(), 20)


def runtime_config(name: str) -> dict:
    return {
        "apiVersion": "aim.eai.amd.com/v1alpha1",
        "kind": "AIMRuntimeConfig",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"env": [{"name": "A", "value": "1"}]},
    }


def ready(kube, name: str):
    def check():
        conditions = kube.get(RC, "team", name)["status"]["conditions"]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
        return True

    return check


async def test_the_operator_keeps_reconciling_when_its_token_file_is_rotated(kube, tmp_path):
    token_file = tmp_path / "token"
    token_file.write_text("old\n")
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, {"tokenFile": str(token_file)})
    kube.accept_tokens({"old"})
    log = tmp_path / "operator.log"
    async with operator_process(config, log) as proc:
        kube.put_object(runtime_config("before"))
        await eventually(ready(kube, "before"), timeout=30)
        token_file.write_text("new\n")  # rotated, and the old token revoked
        kube.accept_tokens({"new"})
        kube.put_object(runtime_config("after"))
        await eventually(ready(kube, "after"), timeout=20)
        assert kube.unauthorized() >= 1  # the old token was tried and refused: the 401 made it read again
        assert proc.returncode is None, log.read_text()[-2000:]  # no restart
    assert "Forbidden control character" not in log.read_text()


async def test_the_operator_keeps_reconciling_when_its_exec_credential_expires(kube, tmp_path):
    lifetime = 3.0
    user, issued = exec_plugin(tmp_path, lifetime=lifetime)
    config = write_kubeconfig(tmp_path / "kubeconfig", kube.url, user)
    kube.accept_tokens(set())

    async def revoke_expired():  # the server accepts a token for its lifetime only
        while True:
            now = time.time()
            # (a real API server keeps accepting a revoked token for up to 10 s: its token cache)
            kube.accept_tokens({t for t, at in issued_at(issued).items() if now - at < lifetime}, wait=False)
            await asyncio.sleep(0.05)

    revoker = asyncio.create_task(revoke_expired())
    log = tmp_path / "operator.log"
    try:
        async with operator_process(config, log) as proc:
            kube.put_object(runtime_config("first"))
            await eventually(ready(kube, "first"), timeout=30)
            for n in range(3):  # each after the credential in use has expired
                await asyncio.sleep(lifetime)
                kube.put_object(runtime_config(f"later-{n}"))
                await eventually(ready(kube, f"later-{n}"), timeout=10)
            assert len(tokens(issued)) >= 4  # the plugin ran again as its credentials expired
            assert proc.returncode is None, log.read_text()[-2000:]
    finally:
        revoker.cancel()


async def test_an_unverified_api_server_certificate_gets_one_warning_at_start(caplog):
    from aim_core.kube import Credentials
    from aim_core.operator.wiring import warn_if_unverified

    with caplog.at_level("WARNING", logger="aim_engine.operator"):
        warn_if_unverified(Credentials(server="https://10.0.0.1:6443", insecure=True))
        warn_if_unverified(Credentials(server="https://10.0.0.1:6443", ca_data="..."))
        warn_if_unverified(Credentials(server="http://127.0.0.1:8001", insecure=True))  # kubectl proxy: no TLS
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "insecure-skip-tls-verify" in warnings[0]


def test_the_operator_reads_its_kubeconfig_in_a_child_and_never_imports_the_kubernetes_client(tmp_path):
    """The operator's process keeps neither the client nor its models; an exec plugin still runs again."""
    user, issued = exec_plugin(tmp_path, lifetime=3600)
    config = write_kubeconfig(tmp_path / "config", "https://127.0.0.1:6443", user)
    script = textwrap.dedent(f"""
        import json, sys
        from aim_core.operator import handlers, login, run  # kopf and the operator's modules
        creds = login.credentials({str(config)!r}, None, in_cluster_first=True, isolated=True)
        again = creds.relogin()
        try:
            login.credentials({str(config)!r}, "nowhere", isolated=True)
        except login.LoginError as exc:
            refused = str(exc)
        print(json.dumps({{"server": creds.server, "token": creds.token, "again": again.token,
                           "expires": creds.expires is not None, "refused": refused,
                           "client": sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "pydantic"))}}))
    """)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert (found["server"], found["token"], found["again"], found["expires"]) == (
        "https://127.0.0.1:6443",
        "t1",
        "t2",
        True,
    )
    assert len(issued.read_text().splitlines()) == 2  # the plugin ran once per login
    assert "nowhere" in found["refused"]
    assert found["client"] == []


def test_a_kubeconfig_read_that_hangs_is_a_login_error_not_a_traceback(tmp_path, monkeypatch):
    """An exec plugin that never answers: the child is stopped and the operator says why."""
    script = tmp_path / "hang.py"
    script.write_text("import time\ntime.sleep(60)\n")
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(script)],
            "interactiveMode": "Never",
        }
    }
    config = write_kubeconfig(tmp_path / "config", "https://127.0.0.1:6443", user)
    monkeypatch.setattr(login, "CHILD_SECONDS", 3.0)
    with pytest.raises(login.LoginError) as caught:
        login.credentials(str(config), None, isolated=True)
    assert "took over 3 s" in str(caught.value)
