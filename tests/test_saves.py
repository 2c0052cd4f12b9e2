"""What a save does to the file system, and hyper-parameters far out of range."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

import edgereg
from edgereg import DFOP, NORMARegressor, SelectiveSampler, StateFileError


def _model() -> DFOP:
    m = DFOP(3)
    m.learn_many(np.eye(3), np.ones(3))
    return m


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_save_keeps_the_file_mode(tmp_path):
    path = tmp_path / "m.npz"
    model = _model()
    model.save(path)
    umask = os.umask(0)
    os.umask(umask)
    assert _mode(path) == 0o666 & ~umask  # a new file: as open() would create it
    os.chmod(path, 0o640)
    model.learn_one(np.ones(3), 2.0)
    model.save(path)
    assert _mode(path) == 0o640  # was 0600 before (mkstemp's mode)
    assert edgereg.load(path).n_seen_ == 4


def test_a_save_writes_through_a_symbolic_link(tmp_path):
    real = tmp_path / "data" / "m.npz"
    real.parent.mkdir()
    link = tmp_path / "current.npz"
    model = _model()
    model.save(real)
    link.symlink_to(real)
    model.learn_one(np.ones(3), 2.0)
    model.save(link)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert edgereg.load(real).n_seen_ == 4


def test_a_killed_savers_temporary_file_is_removed_by_the_next_save(tmp_path):
    path = tmp_path / "m.npz"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)  # that process has exited
    stale = tmp_path / f".m.npz.{dead_pid}.x1y2.edgereg-tmp"
    stale.write_bytes(b"half an archive")
    live = tmp_path / f".m.npz.{os.getppid()}.z9.edgereg-tmp"  # a live writer's: kept
    live.write_bytes(b"in progress")
    other = tmp_path / f".other.npz.{dead_pid}.q.edgereg-tmp"  # another file's: kept
    other.write_bytes(b"not ours")
    _model().save(path)
    assert not stale.exists() and live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [live.name, other.name, "m.npz"])


def test_a_kill_during_a_save_loses_nothing_and_the_next_save_cleans_up(tmp_path):
    path = tmp_path / "m.npz"
    _model().save(path)
    code = f"""
import numpy as np, edgereg, os, signal
import edgereg._base as base
real = np.savez
def dying(fh, **arrays):
    real(fh, **arrays)
    os.kill(os.getpid(), signal.SIGKILL)  # killed with the temporary file written
base.np.savez = dying
m = edgereg.load({str(path)!r})
m.learn_one(np.ones(3), 5.0)
m.save({str(path)!r})
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert done.returncode == -9
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".edgereg-tmp")]
    assert len(leftovers) == 1
    assert edgereg.load(path).n_seen_ == 3  # the old file, whole
    _model().save(path)
    assert not leftovers[0].exists()


@pytest.mark.parametrize("make", [
    lambda v: DFOP(3, forgetting=v),
    lambda v: DFOP(3, p0=v),
    lambda v: NORMARegressor(3, regularization=v),
    lambda v: SelectiveSampler(3, delta=v),
])
def test_huge_integers_as_real_hyper_parameters_are_value_errors(make):
    with pytest.raises(ValueError, match="must be a finite real number, got an integer of 401"):
        make(10**400)


@pytest.mark.parametrize("make", [
    lambda v: DFOP(v),
    lambda v: NORMARegressor(3, budget=v),
    lambda v: SelectiveSampler(3, window_max=v),
])
def test_integers_beyond_int64_are_value_errors(make):
    with pytest.raises(ValueError, match=r"must be an integer in \[1, 4611686018427387903\]"):
        make(2**63)


def test_a_state_file_without_its_model_entry_is_a_state_file_error(tmp_path):
    path = tmp_path / "m.npz"
    _model().save(path)
    z = dict(np.load(path))
    del z["model"]
    np.savez(path, **z)
    with pytest.raises(StateFileError, match="no model entry"):
        edgereg.load(path)


@pytest.mark.parametrize("name", ["_NORMA", "OnlineModel", "_Private", "BankModel"])
def test_a_state_file_naming_a_private_or_base_class_is_a_state_file_error(tmp_path, name):
    # "_NORMA" (the NORMA models' base) raised AttributeError from _allocate.
    path = tmp_path / "m.npz"
    NORMARegressor(3).save(path)
    z = dict(np.load(path))
    z["model"] = np.array(name)
    np.savez(path, **z)
    with pytest.raises(StateFileError, match=f"unknown model class '{name}'"):
        edgereg.load(path)


def test_edgereg_load_opens_a_fleet_file_and_checks_its_counters(tmp_path):
    from edgereg import Fleet

    fleet = Fleet(3, 4, forgetting=0.05)
    X = np.random.default_rng(0).normal(size=(3, 20, 4))
    fleet.learn_many(X, X.sum(axis=2))
    path = tmp_path / "fleet.npz"
    fleet.save(path)
    loaded = edgereg.load(path)  # refused before: "not an edgereg state file"
    assert type(loaded) is Fleet
    np.testing.assert_array_equal(loaded.state.P, fleet.state.P)
    z = dict(np.load(path))
    z["state.counts"][1, 3] = 10**12  # model 1's next refresh coordinate
    np.savez(path, **z)
    with pytest.raises(StateFileError, match="of model 1 holds the next refresh coordinate"):
        edgereg.load(path)
