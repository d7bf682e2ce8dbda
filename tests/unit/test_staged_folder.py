"""judgelab.files.staged_folder: a folder is published whole and owner-only, or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from judgelab.files import staged_folder


@pytest.fixture
def loose_umask():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_success_replaces_the_folder_whole_and_owner_only(tmp_path, loose_umask):
    out = tmp_path / "judge"
    out.mkdir()
    (out / "old.txt").write_text("from an earlier run")
    with staged_folder(out) as folder:
        assert folder.name == "judge" and folder.parent != tmp_path
        (folder / "weights").mkdir()
        (folder / "weights" / "w.bin").write_bytes(b"\0")  # as a library writer would, with the umask
    assert sorted(p.name for p in out.rglob("*")) == ["w.bin", "weights"]
    assert _mode(out) == 0o700 and _mode(out / "weights") == 0o700 and _mode(out / "weights" / "w.bin") == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["judge"]  # no scratch left beside it


def test_failure_leaves_the_old_folder_and_no_scratch(tmp_path):
    out = tmp_path / "judge"
    out.mkdir()
    (out / "old.txt").write_text("keep me")
    with pytest.raises(RuntimeError), staged_folder(out) as folder:
        (folder / "half.txt").write_text("half written")
        raise RuntimeError("killed while writing")
    assert [p.name for p in out.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["judge"]


def test_a_custom_move_in_sees_the_finished_folder(tmp_path):
    seen = []
    with staged_folder(tmp_path / "report", move_in=lambda folder, out: seen.append(
            (sorted(p.name for p in folder.iterdir()), out.name))) as folder:
        (folder / "a.json").write_text("{}")
    assert seen == [(["a.json"], "report")]
    assert list(tmp_path.iterdir()) == []  # the custom move_in published nothing; the scratch is gone
