"""The sandbox of the image tests sees what the unknown uid wrote, and that uid can write nothing of root's."""

from __future__ import annotations

import subprocess

import pytest

from aim_testing.sandbox import as_uid, can_switch_uid, files_owned_by, remap, unknown_uid


@pytest.mark.skipif(not can_switch_uid(), reason="switching uid needs root and setpriv")
def test_a_file_the_uid_writes_is_found_and_root_folders_are_read_only_to_it(tmp_path):
    uid = unknown_uid()
    tmp_path.chmod(0o755)
    allowed = tmp_path / "scratch"
    allowed.mkdir()
    subprocess.run(["chown", str(uid), str(allowed)], check=True)
    assert subprocess.run(as_uid(uid, ["touch", str(tmp_path / "planted")]), check=False).returncode != 0
    subprocess.run(as_uid(uid, ["touch", str(allowed / "fine")]), check=True)
    assert files_owned_by(uid, (tmp_path,), allowed=(allowed,)) == []
    subprocess.run(as_uid(uid, ["mkdir", str(allowed / "x")]), check=True)
    subprocess.run(["chmod", "1777", str(tmp_path)], check=True)  # now world-writable, like /tmp
    subprocess.run(as_uid(uid, ["touch", str(tmp_path / "planted")]), check=True)
    assert files_owned_by(uid, (tmp_path,), allowed=(allowed,)) == [str(tmp_path / "planted")]


def test_remap_moves_values_below_a_mount_only():
    env = {"HOME": "/tmp", "HF_HOME": "/tmp/.hf", "OTHER": "/tmpfoo", "TARGET_DIR": "/cache", "X": "1"}
    assert remap(env, {"/tmp": "/s", "/cache": "/c"}) == {
        "HOME": "/s",
        "HF_HOME": "/s/.hf",
        "OTHER": "/tmpfoo",
        "TARGET_DIR": "/c",
        "X": "1",
    }
