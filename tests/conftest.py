"""Session setup: the kernels of tests/test_determinism.py's scenes are compiled first, in
that file's order (the gallery under its family, as the app's first launch compiles its
opening scene, then the two chains), whatever tests run before them. A numba helper without
a fastmath option of its own is compiled with the options of the first kernel that calls it,
and the disk cache keeps that build: the recorded digests are of this compile order."""


def pytest_sessionstart(session):
    from test_determinism import SCENES
    for build in SCENES.values():
        build().advance_steps(1)
