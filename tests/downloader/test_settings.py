"""The downloader's pure parts: filters, settings, source URIs, status bodies, the stall clock."""

from __future__ import annotations

import pytest

from aim_core.downloader.config import Settings, parse_protocols
from aim_core.downloader.filters import DownloadFilter, FilterError, select
from aim_core.downloader.monitor import STARTUP_ALLOWANCE, Monitor, folder_bytes
from aim_core.downloader.sources import DownloadError, Failure, Manifest, RemoteFile, Source, safe_relative_path
from aim_core.downloader.status import StatusReporter, download_status, progress_status

REPO = [
    "config.json",
    "model-00001.safetensors",
    "original/consolidated.pth",
    "original/params.json",
    "tokenizer/vocab.txt",
    "README.md",
]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (None, ["config.json", "model-00001.safetensors", "README.md"]),  # default: no subfolders
        ("", ["config.json", "model-00001.safetensors", "README.md"]),
        ("{}", REPO),  # empty filter: everything
        (
            '{"include": ["*.safetensors", "*.json"]}',
            ["config.json", "model-00001.safetensors", "original/params.json"],
        ),  # * crosses folders, like huggingface_hub
        ('{"exclude": ["original/"]}', ["config.json", "model-00001.safetensors", "tokenizer/vocab.txt", "README.md"]),
        ('{"include": ["original/*"], "exclude": ["*.pth"]}', ["original/params.json"]),
        ('{"include": ["*.bin"]}', []),
    ],
)
def test_filter_selects_like_the_reference_describes(text, kept):
    assert select(REPO, DownloadFilter.from_json(text)) == kept


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[1]", "must be a JSON object"),
        ("{include: x}", "is not JSON"),
        ('{"include": "*.json"}', "must be a list of glob strings"),
        ('{"include": [""]}', "empty pattern"),
        ('{"includes": ["*"]}', "unknown keys ['includes']"),
    ],
)
def test_a_bad_filter_says_what_is_wrong(text, error):
    with pytest.raises(FilterError, match=error.replace("[", r"\[").replace("]", r"\]")):
        DownloadFilter.from_json(text)


def test_settings_follow_the_upstream_environment_names():
    settings = Settings.from_env(
        {
            "TARGET_DIR": "/cache/x",
            "AIM_DOWNLOADER_PROTOCOL": "xet, HTTP",
            "PROGRESS_INTERVAL": "2",
            "STALL_TIMEOUT": "60s",
            "EXPECTED_SIZE_BYTES": "123",
            "ARTIFACT_NAME": "a",
            "ARTIFACT_NAMESPACE": "ns",
            "AIM_DOWNLOAD_FILTER": "{}",
        }
    )
    assert settings.target_dir == "/cache/x"
    assert settings.sequence == ("XET", "HTTP")
    assert (settings.progress_interval, settings.stall_timeout, settings.expected_size) == (2.0, 60.0, 123)
    assert (settings.artifact_name, settings.artifact_namespace) == ("a", "ns")
    assert settings.download_filter == DownloadFilter()
    defaults = Settings.from_env({})
    assert defaults.sequence == ("DEFAULT",) and defaults.progress_interval == 5 and defaults.stall_timeout == 120
    assert defaults.target_dir == "/cache" and defaults.download_filter == DownloadFilter.default()


@pytest.mark.parametrize(
    ("env", "error"),
    [
        ({"AIM_DOWNLOADER_PROTOCOL": "XET,FTP"}, "unknown protocols ['FTP']"),
        ({"STALL_TIMEOUT": "soon"}, "STALL_TIMEOUT='soon' is not a number"),
        ({"PROGRESS_INTERVAL": "0"}, "must be greater than 0"),
        ({"EXPECTED_SIZE_BYTES": "-1"}, "must not be negative"),
        ({"AIM_DOWNLOADER_VERIFY": "md5"}, "expected one of checksum, size"),
        ({"AIM_DOWNLOAD_FILTER": "nope"}, "is not JSON"),
    ],
)
def test_bad_settings_are_invalid_with_a_message(env, error):
    with pytest.raises(DownloadError) as caught:
        Settings.from_env(env)
    assert caught.value.kind is Failure.INVALID
    assert error in str(caught.value)


def test_protocols_keep_their_order():
    assert parse_protocols("HF_TRANSFER,XET") == ("HF_TRANSFER", "XET")
    assert parse_protocols(" ") == ()


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("hf://meta-llama/Llama-3.1-8B", {"scheme": "hf", "repo": "meta-llama/Llama-3.1-8B", "revision": "main"}),
        ("hf://org/model@v1.0", {"scheme": "hf", "repo": "org/model", "revision": "v1.0"}),
        ("hf://gpt2", {"scheme": "hf", "repo": "gpt2", "revision": "main"}),  # org-less Hub ids are valid (issue 18)
        ("hf://bert-base-uncased@v2", {"scheme": "hf", "repo": "bert-base-uncased", "revision": "v2"}),
        ("s3://bucket/models/llama", {"scheme": "s3", "bucket": "bucket", "prefix": "models/llama"}),
        ("s3://bucket", {"scheme": "s3", "bucket": "bucket", "prefix": ""}),
    ],
)
def test_sources_parse(uri, expected):
    source = Source.parse(uri)
    assert {k: getattr(source, k) for k in expected} == expected


@pytest.mark.parametrize(
    "uri",
    [
        "hf://a/b/c",
        "hf://..",
        "hf://.hidden",
        "hf://org/../etc",
        "hf://org/model@",
        "s3://Bad_Bucket/x",
        "s3://bucket/a/../../b",
        "gs://bucket/x",
        "hf://../x",
    ],
)
def test_bad_sources_are_invalid(uri):
    with pytest.raises(DownloadError) as caught:
        Source.parse(uri)
    assert caught.value.kind is Failure.INVALID


@pytest.mark.parametrize("path", ["../x", "/etc/passwd", "a/../../x", "a//b", "./a", "a\\b", ""])
def test_remote_paths_that_leave_the_folder_are_refused(path):
    with pytest.raises(DownloadError, match="unsafe path"):
        safe_relative_path(path, "hf://org/model")


def test_the_manifest_travels_to_the_attempt_process_unchanged():
    manifest = Manifest(Source.parse("hf://org/m@abc"), (RemoteFile("a.bin", 3, sha256="00"),), revision="f" * 40)
    assert Manifest.from_json(manifest.to_json()) == manifest


def test_progress_is_held_at_99_until_done():
    assert progress_status(999, 1000) == {
        "progress": {"percentage": 99, "displayPercentage": "99 %", "downloadedBytes": 999, "totalBytes": 1000}
    }
    assert progress_status(1000, 1000)["progress"]["percentage"] == 99
    assert progress_status(1000, 1000, done=True)["progress"]["displayPercentage"] == "100 %"
    assert progress_status(5, 0)["progress"]["percentage"] == 0


def test_the_attempt_body_has_the_upstream_fields():
    assert download_status("XET", 1, 2, ("XET", "HTTP"), "m") == {
        "download": {
            "protocol": "XET",
            "attempt": 1,
            "totalAttempts": 2,
            "protocolSequence": "XET,HTTP",
            "message": "m",
        }
    }


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_stall_clock_fires_once_when_nothing_grows_and_restarts_per_attempt():
    clock, size, stalls = Clock(), [0], []
    monitor = Monitor(
        StatusReporter(None, "", ""),
        total=100,
        interval=5,
        stall_timeout=10,
        measure=lambda: size[0],
        on_stall=lambda: stalls.append(clock.now),
        clock=clock,
    )
    clock.now = 9
    assert not monitor.check_stall()
    size[0], clock.now = 10, 15  # growth resets the clock
    assert not monitor.check_stall()
    clock.now = 24.9
    assert not monitor.check_stall()
    clock.now = 25
    assert monitor.check_stall() and stalls == [25]
    clock.now = 40
    assert not monitor.check_stall() and stalls == [25]
    monitor.new_attempt()
    clock.now = 45  # the attempt's process says it is ready: the clock starts now
    monitor.attempt_ready()
    clock.now = 54.9
    assert not monitor.check_stall()
    clock.now = 55
    assert monitor.check_stall() and stalls == [25, 55]


def test_an_attempt_that_is_slow_to_start_is_not_a_stall_but_one_that_never_starts_is():
    # On a busy node a new attempt's process can take seconds to import; that is not a stalled network.
    clock, stalls = Clock(), []
    monitor = Monitor(
        StatusReporter(None, "", ""),
        total=100,
        interval=5,
        stall_timeout=2,
        measure=lambda: 0,
        on_stall=lambda: stalls.append(clock.now),
        clock=clock,
    )
    monitor.new_attempt()
    clock.now = 5
    assert not monitor.check_stall()
    monitor.attempt_ready()
    clock.now = 6.9
    assert not monitor.check_stall()
    clock.now = 7
    assert monitor.check_stall() and stalls == [7]
    monitor.new_attempt()  # the next attempt never says it is ready
    clock.now = 7 + 2 + STARTUP_ALLOWANCE - 0.1
    assert not monitor.check_stall()
    clock.now = 7 + 2 + STARTUP_ALLOWANCE
    assert monitor.check_stall() and stalls == [7, clock.now]


def test_folder_bytes_counts_nested_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"12345")
    (tmp_path / "y").write_bytes(b"12")
    assert folder_bytes(tmp_path) == 7
    assert folder_bytes(tmp_path / "missing") == 0
