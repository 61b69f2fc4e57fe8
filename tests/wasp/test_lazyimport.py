"""wasp.lazyimport: a package's face loads a name's module only when the name is asked for."""

import subprocess
import sys

import pytest

from wasp.lazyimport import face


def _run(code):
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.split()


def test_importing_a_room_loads_none_of_its_modules():
    code = ("import sys, tuner.sets, tuner.texel, tuner.nnue; "
            "print('numba' in sys.modules, 'tuner.sets.builder' in sys.modules)")
    assert _run(code) == ["False", "False"]


def test_a_name_loads_its_module_and_is_then_the_module_s_own():
    code = ("import sys, tuner.texel as t; s = t.Scorer; "
            "from tuner.texel.objective import Scorer; "
            "print(s is Scorer, 'tuner.texel.objective' in sys.modules, 'Scorer' in vars(t))")
    assert _run(code) == ["True", "True", "True"]


def test_an_unknown_name_is_an_attribute_error_naming_the_package():
    all_, getattr_, dir_ = face("tuner.texel", {"objective": "Scorer error"})
    assert all_ == ["Scorer", "error"] and dir_() == ["Scorer", "error"]
    with pytest.raises(AttributeError, match="'tuner.texel' has no attribute 'nothing'"):
        getattr_("nothing")


def test_every_face_name_exists_in_its_module():
    import importlib

    import tuner

    for room in tuner.__all__:
        module = importlib.import_module(f"tuner.{room}")
        for name in module.__all__:
            assert getattr(module, name) is not None, (room, name)
