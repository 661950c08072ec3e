"""The first launch's warm-up plan asks FAMILIES: every shipped scene with every family
once over the processes, the window's scene's family (and ropes) first, the processes
balanced by the families' COMPILE_WEIGHT, a family's shared kernels (warm_up_kernels)
beside it; a family registered in a test is planned like the shipped ones."""
import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from physics.solvers import DEFAULT_FAMILY, FAMILIES, SolverBase
from shell import warmup

ROOT = Path(__file__).resolve().parent.parent
SCENES = ROOT / "scenes"
EVERY = sorted((p.stem, f) for p in SCENES.glob("*.toml") for f in FAMILIES)


def _all_needs():
    return [None] + [(f, ropes) for f in FAMILIES for ropes in (False, True)]


def _scene_steps(parts):
    return sorted((Path(p).stem, f) for part in parts for p, f in part if warmup.is_scene(p))


def _span(plans):
    return max(sum(s.weight for s in plan) for plan in plans)


@pytest.mark.parametrize("processes", [1, 2, 3])
def test_every_scene_is_warmed_once_with_every_family_whatever_the_scene_needs(processes):
    for needs in _all_needs():
        parts = warmup.layout(needs, processes)
        assert len(parts) == processes and all(parts)
        assert _scene_steps(parts) == EVERY, needs
        kernels = [f for part in parts for p, f in part if p == warmup.KERNELS]
        shared = {warmup.shared_kernels(f) for f in FAMILIES} - {None}
        # a family's shared kernels: a step of their own only beside another process, once per function
        assert len(kernels) == (len(shared) if processes > 1 else 0)
        assert {warmup.shared_kernels(f) for f in kernels} == (shared if processes > 1 else set())
        # the hulls' narrow phase: a step of its own beside another process, where the plan
        # ends no later than with each process's first scene with hulls compiling it
        hulls = [p for part in parts for p, _ in part if p == warmup.HULL_KERNELS]
        assert len(hulls) == (1 if processes > 1 else 0)
        if hulls:
            without = [[s for s in part if s[0] != warmup.HULL_KERNELS] for part in parts]
            assert _span(warmup.weigh(parts)) <= _span(warmup.weigh(without)), needs


def test_the_hull_narrow_phase_compiles_once_before_any_step_that_needs_it_beside_the_opening_scene():
    # the window's default scene (no hulls, no ropes) under two processes: the step that
    # compiles the hulls' narrow phase ends before either process reaches a step needing it
    # (a scene with hulls, or any scene under a family whose kernels always have them)
    scene = SCENES / "gallery.toml"
    parts = warmup.layout(warmup.scene_needs(scene), 2, scene=scene)
    plans = warmup.weigh(parts)
    (k, i), = [(k, i) for k, part in enumerate(parts) for i, (p, _) in enumerate(part) if p == warmup.HULL_KERNELS]
    end = sum(s.weight for s in plans[k][:i + 1])
    for part, plan in zip(parts, plans):
        first = next(n for n, step in enumerate(part) if warmup.needs_hulls(*step))
        assert sum(s.weight for s in plan[:first]) >= end
    assert warmup.has_hulls(SCENES / "xarm_pick.toml") and warmup.has_hulls(SCENES / "rocks.toml")
    assert not warmup.has_hulls(scene) and not warmup.has_hulls(SCENES / "rope_swing.toml")
    for family, cls in warmup.families().items():
        assert warmup.needs_hulls(SCENES / "xarm_pick.toml", family)
        assert warmup.needs_hulls(scene, family) == cls.ROBOT_FEATURES_ALWAYS
    assert warmup.layout(warmup.scene_needs(SCENES / "rocks.toml"), 2, scene=SCENES / "rocks.toml")[1][0][0] \
        != warmup.HULL_KERNELS                      # a window's scene with hulls compiles them itself
    assert not any(p == warmup.HULL_KERNELS for part in warmup.layout(warmup.scene_needs(SCENES / "rocks.toml"), 2,
                                                                      scene=SCENES / "rocks.toml") for p, _ in part)


def test_the_scenes_family_comes_first_and_the_window_waits_for_it_alone():
    for needs, processes in itertools.product(_all_needs()[1:], (1, 2)):
        family, ropes = needs
        parts = warmup.layout(needs, processes)
        plans = warmup.weigh(parts)
        first_path, first_family = parts[0][0]
        assert first_family == family and warmup.has_ropes(first_path) == (ropes and processes == 1)
        needed = warmup._needed(plans, needs)
        waited = [step for plan, n in zip(plans, needed) for step in plan[:n]]
        gives = set().union(*(s.provides for s in waited))
        assert f"family:{family}" in gives and ("ropes" in gives) == ropes, (needs, waited)
        assert not any(f"family:{f}" in gives for f in FAMILIES if f != family and not ropes)
        if processes == 2:
            assert needed[0] == 1 and needed[1] <= 1              # the first step of one process or both
            if not ropes and warmup.shared_kernels(family):
                path, named = parts[1][0]                         # its shared kernels beside it
                assert path == warmup.KERNELS and warmup.shared_kernels(named) is warmup.shared_kernels(family)
    for processes in (1, 2):
        plans = warmup.weigh(warmup.layout(None, processes))
        assert warmup._needed(plans, None) == [len(p) for p in plans]     # an unknown scene: everything


def test_the_plan_weighs_each_kernel_group_once_and_two_processes_share_it():
    """The one-process plan weighs each group once: the common kernels, each family's
    COMPILE_WEIGHT (shared kernels once per function), the ropes, the hulls' narrow phase, and
    each family's kernel again for the other feature set (VARIANT_WEIGHT, once) and with
    the robots' features (ROBOT_VARIANT_WEIGHT, once, unless ROBOT_FEATURES_ALWAYS). Two
    processes share it:
    the longer one ends no later than half of it plus its heaviest step (list
    scheduling's bound), and well before it."""
    one = warmup.weigh(warmup.layout(None, 1))[0]
    fams = FAMILIES.values()
    shared = {warmup.shared_kernels(f.name): f.WARM_UP_WEIGHT for f in fams if warmup.shared_kernels(f.name)}
    total = (warmup.COMMON_WEIGHT + warmup.ROPES_WEIGHT + warmup.HULLS_WEIGHT + sum(f.COMPILE_WEIGHT for f in fams)
             - sum(f.WARM_UP_WEIGHT for f in fams if warmup.shared_kernels(f.name)) + sum(shared.values()))
    variants = sum(f.VARIANT_WEIGHT + (0.0 if f.ROBOT_FEATURES_ALWAYS else f.ROBOT_VARIANT_WEIGHT) for f in fams)
    small = sum(s.weight for s in one if s.weight == warmup.SMALL)
    assert sum(s.weight for s in one) == pytest.approx(total + variants + small)
    whole = sum(s.weight for s in one)
    for needs in _all_needs():
        two = warmup.weigh(warmup.layout(needs, 2))
        assert _span(two) <= whole / 2 + max(s.weight for s in one) and _span(two) < 0.8 * whole, needs


def test_a_family_asks_its_own_scenes_and_bad_names_exit_2(capsys):
    for family in FAMILIES:
        todo = warmup.steps(family=family)
        assert sorted((p.stem, f) for p, f in todo) == [e for e in EVERY if e[1] == family]
    assert warmup.main("no_such_family") == 2
    err = capsys.readouterr().err
    assert "no_such_family" in err and all(f in err for f in FAMILIES)
    proc = subprocess.run([sys.executable, "-m", "shell.warmup", "no_such_family"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "not a solver family" in proc.stderr and "Traceback" not in proc.stderr


def test_scene_needs_reads_the_family_and_the_ropes_from_the_file(tmp_path):
    assert warmup.scene_needs(SCENES / "gallery.toml") == (warmup.scene_needs(SCENES / "gallery.toml")[0], False)
    assert warmup.scene_needs(SCENES / "rope_swing.toml")[1] is True
    for family in FAMILIES:
        assert warmup.scene_needs(SCENES / "door.toml", {"solver.kind": f'"{family}"'}) == (family, False)
    bare = tmp_path / "bare.toml"
    bare.write_text('[[bodies]]\nname = "ball"\nshape = "sphere"\nradius = 0.1\nmass = 1.0\n')
    assert warmup.scene_needs(bare) == (DEFAULT_FAMILY, False)
    assert warmup.scene_needs(tmp_path / "robot.urdf") == (DEFAULT_FAMILY, False)
    assert warmup.scene_needs(SCENES / "no such scene.toml") is None
    assert warmup.scene_needs(SCENES / "door.toml", {"solver.kind": "no_such_family"}) is None


class Heavy(SolverBase):
    """A toy family that compiles long (COMPILE_WEIGHT) and shares kernels of its own."""
    name = "heavy_toy"
    description = "A test family."
    COMPILE_WEIGHT = 5000.0
    WARM_UP_WEIGHT = 100.0
    calls = []

    @staticmethod
    def warm_up_kernels():
        Heavy.calls.append("warmed")


@pytest.fixture
def heavy(monkeypatch):
    monkeypatch.setitem(FAMILIES, Heavy.name, Heavy)
    Heavy.calls.clear()
    yield Heavy.name


def test_a_family_registered_in_a_test_is_planned_weighed_and_warmed(heavy, tmp_path):
    rest = sum(s.weight for s in warmup.weigh(warmup.layout(None, 1))[0] if not s.label.endswith(f"({heavy})"))
    for needs in [None, (heavy, False), (heavy, True)] + _all_needs()[1:]:
        parts = warmup.layout(needs, 2)
        assert _scene_steps(parts) == sorted(EVERY + [(p.stem, heavy) for p in SCENES.glob("*.toml")])
        assert (warmup.KERNELS, heavy) in parts[0] + parts[1]
        plans = warmup.weigh(parts)
        # its weight is the plan's: its scenes without ropes or hulls in one process, which
        # carries less than half of the others' weight
        mine = {k for k, part in enumerate(parts) for p, f in part if f == heavy and warmup.is_scene(p)
                and not warmup.has_ropes(p) and not warmup.has_hulls(p)}
        assert len(mine) == 1, needs
        k = mine.pop()
        assert sum(s.weight for s in plans[k] if not s.label.endswith(f"({heavy})")) < rest / 2, needs
    parts = warmup.layout((heavy, False), 2)
    assert parts[0][0][1] == heavy and parts[1][0] == (warmup.KERNELS, heavy)
    plans = warmup.weigh(parts)
    assert plans[0][0].weight == pytest.approx(warmup.COMMON_WEIGHT + 5000.0 - 100.0)   # its shared kernels beside
    assert plans[1][0].weight == pytest.approx(100.0)
    warmup.exercise(warmup.KERNELS, heavy)
    assert Heavy.calls == ["warmed"]
    bare = tmp_path / "bare.toml"
    bare.write_text(f'[solver]\nkind = "{heavy}"\n')
    assert warmup.scene_needs(bare) == (heavy, False)


def test_compile_times_offers_every_family():
    from shell.compile_times import main
    with pytest.raises(SystemExit) as e:
        main(["--part", "no_such_family"])
    assert e.value.code == 2
    proc = subprocess.run([sys.executable, "-m", "shell.compile_times", "--help"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0 and all(f in proc.stdout for f in FAMILIES)


def test_the_windows_own_scene_is_the_first_step_and_all_the_window_waits_for(tmp_path):
    """With the window's scene file, its first process starts with that very scene under
    its family (the kernels of its features, e.g. contacts, are then cached when it
    loads), once; a scene that is not shipped is stepped in addition."""
    mine = tmp_path / "mine.toml"
    mine.write_text((SCENES / "rope_swing.toml").read_text())
    for scene in (SCENES / "gallery.toml", SCENES / "rope_swing.toml", mine):
        needs = warmup.scene_needs(scene)
        for processes in (1, 2):
            parts = warmup.layout(needs, processes, scene=scene)
            assert parts[0][0] == (scene, needs[0])
            shipped = [(p.stem, f) for p, f in [s for part in parts for s in part] if warmup.is_scene(p)]
            extra = [] if scene.parent == SCENES else [(scene.stem, needs[0])]
            assert sorted(shipped) == sorted(EVERY + extra)
            plans = warmup.weigh(parts)
            assert warmup._needed(plans, needs) == [1] + [0] * (processes - 1)
            if processes == 2 and warmup.shared_kernels(needs[0]):
                path, named = parts[1][0]
                assert path == warmup.KERNELS and warmup.shared_kernels(named) is warmup.shared_kernels(needs[0])
