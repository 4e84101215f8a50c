import os

pytest_plugins = ["aim_testing.fixtures", "aim_testing.registry.fixtures"]

# Tests that use the `kube` fixture run on the emulator and on a real kube-apiserver ([apiserver]),
# except those listed here (and tests marked @pytest.mark.emulator_only("why")). See docs/testing.md.
EMULATOR_ONLY = {
    # The emulator's own tests: what they pin is the emulator's behaviour (kube.emulator, kmock).
    "tests/testing/": "tests of the API emulator itself",
    # The downloader's tests use the kube fixture only as a Secret store for an in-process client.
    "tests/downloader/": "the downloader's own tests; the cluster is only a Secret store",
    # kube-apiserver 1.24 cannot compile CEL transition rules (oldSelf); the test CRDs go without them.
    "tests/wire/test_service_parity_wire.py::test_naming_a_template_on_a_running_service_moves_it_off_the_recorded_one": "needs a CEL transition rule (oldSelf), which kube-apiserver 1.24 cannot compile",
    # kube.emulator.compact() drops the watch history at once; kube-apiserver compacts etcd on its own
    # schedule (--etcd-compaction-interval, 5 min) behind its watch cache, so no test can make it answer 410.
    "tests/operator/test_reflector.py::test_a_stream_resumes_where_it_was_and_lists_again_after_410_gone": "forces a watch-history compaction (kube.emulator.compact()), which a real server does on its own schedule",
    # The readiness probe is checked against CRDs that are missing, not yet Established and not Established
    # (Installing): a real server's apiextensions controller sets Established itself, and the session's
    # server shares its CRDs with every other test.
    "tests/wire/test_metrics_wire.py::test_readyz_turns_200_once_plugins_are_loaded_and_the_crds_established": "plays CRDs that are missing or not Established, which a real server's CRD controller decides",
    # The redaction scan reads every request body the emulator received and the operator authenticates
    # with a token the test makes up (so that its leaking can be seen); the real server knows only the
    # tokens of its token file.
    "tests/wire/test_secrets_wire.py::test_no_secret_reaches_status_events_or_logs": "scans every request body the emulator received (kube.emulator) and logs in with a token of the test's own making",
}
# Not yet passing on a real API server (issue 19); each line goes once its test is converted.
_NOT_YET = "not yet converted for a real API server (issue 19): runs on the emulator only"
_PENDING: list[str] = []
if not os.environ.get("AIM_APISERVER_PENDING"):  # set it to run these on the real server too (converting)
    EMULATOR_ONLY.update(dict.fromkeys(_PENDING, _NOT_YET))


def pytest_configure(config):
    from aim_testing import fixtures

    fixtures.emulator_only_paths.update(EMULATOR_ONLY)
