"""The benchmark entry points run and report what they say (speed itself is never asserted)."""
import json
from pathlib import Path

from physics.bench import main


def test_bench_scenes_flag_runs_the_scene_bench_and_reports_the_door_without_a_blow_up(capsys):
    """`python -m physics.bench --scenes` is the scene bench: one record per scene and
    solver, a finite µs/step, the door's hinge gap within the impulse solver's 1 mm."""
    door = str(Path(__file__).resolve().parents[1] / "scenes" / "door.toml")
    assert main(["--scenes", "--scene", door, "--solver", "impulse", "--duration", "0.2", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["scene"], r["solver"]) for r in records] == [("door", "impulse")]
    r = records[0]
    assert r["blew_up_at_s"] is None and 0.0 < r["us_per_step"] < 1e6 and r["worst_gap_m"] <= 1e-3
