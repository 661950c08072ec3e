"""The shape of the code that the rest relies on: layers, small signatures, one settings
schema read everywhere, solver families with one surface."""
import ast
from pathlib import Path

import pytest

import physics
from physics.io.scene import solver_keys
from physics.settings import WORLD_SETTINGS, Setting
from physics.solvers import FAMILIES, SolverBase

ROOT = Path(__file__).resolve().parent.parent
LAYERS = {"physics": set(), "render": {"physics"}, "ui": {"physics", "render"},
          "shell": {"physics", "render", "ui"}}


def _modules(package):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_no_module_imports_a_layer_above_it(package):
    allowed = LAYERS[package] | {package}
    for path in _modules(package):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top not in LAYERS or top in allowed, f"{path.relative_to(ROOT)} imports {name}"


def test_no_function_in_physics_takes_more_than_15_parameters():
    for path in _modules("physics"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = len(node.args.args) + len(node.args.kwonlyargs) + len(node.args.posonlyargs)
                assert n <= 15, f"{path.relative_to(ROOT)}:{node.lineno} {node.name} takes {n} parameters"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_solver_family_has_the_same_small_surface(family):
    cls = FAMILIES[family]
    assert issubclass(cls, SolverBase)
    solver = cls()
    assert solver.name == family and solver.description
    schema = solver.schema()
    shown = {name for row in cls.PANEL for name in row} | set(cls.SIMULATION)
    assert shown <= set(schema) and set(cls.WHEN) <= shown, "the panel lays out the family's own settings"
    assert all(name in schema and set(values) <= set(schema[name].choices or (True, False))
               for name, values in cls.WHEN.values())
    assert solver.HONOURS <= {"limits", "friction", "damping", "motors", "couplings", "contacts", "restitution"}
    assert all(isinstance(s, Setting) for s in cls.SETTINGS)
    assert solver.settings == {s.name: s.default for s in cls.SETTINGS}
    for attr in ("configure", "step", "model_changed", "free_rows_used", "stats"):
        assert hasattr(solver, attr)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_settings_schema_is_what_world_scene_files_and_errors_use(family):
    world = physics.World()
    for s in FAMILIES[family].SETTINGS:
        assert s.name in solver_keys()                      # the scene loader reads every setting
        if s.kind in ("int", "float"):
            world.configure(family, **{s.name: s.hi})
            assert world.solver_settings(family)[s.name] == s.hi
            with pytest.raises(ValueError, match=s.name):
                world.configure(family, **{s.name: s.hi * 2 + 1})
        elif s.kind == "choice":
            for choice in s.choices:
                world.configure(family, **{s.name: choice})
            with pytest.raises(ValueError, match="one of"):
                world.configure(family, **{s.name: "no such thing"})


def test_world_settings_are_checked_by_their_schema():
    world = physics.World()
    for s in WORLD_SETTINGS:
        if s.kind == "float":
            with pytest.raises(ValueError, match=s.name):
                setattr(world, s.name, s.hi * 10)


def test_adding_bodies_and_joints_grows_arrays_in_place_without_copying_each_time():
    """Building is linear: the arrays double their capacity instead of growing by one."""
    from physics.builders import make_chain
    world = physics.World()
    make_chain(world, links=3)
    base = world.state.bodies.pos.base
    make_chain(world, name="more", links=2, origin=(0, 1, 0))
    assert world.state.bodies.pos.base is base            # 6 → 8 bodies: same storage (capacity 8)


@pytest.mark.parametrize("package", ["physics", "render", "ui", "shell", "app.py"])
def test_no_code_outside_the_solvers_names_a_solver_family(package):
    """ui/, shell/, physics/io and the rest ask the solver object (SolverBase) and FAMILIES,
    never a family by name: no string constant equal to a family's name outside
    physics/solvers/ (tests and scripts/, which pin configurations to measure, may)."""
    paths = [ROOT / package] if package.endswith(".py") else _modules(package)
    found = []
    for path in paths:
        if (ROOT / "physics" / "solvers") in path.parents:
            continue
        tree = ast.parse(path.read_text())
        # a key into a table of arrays (state["rows"]["impulse"]: the rows' accumulated
        # impulse) is a field's name, not a family's, unless the table is the solvers'
        keys = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)
                and "solver" not in ast.unparse(n.value)}
        found += [f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in FAMILIES
                  and id(node) not in keys]
    assert not found, "names of solver families: " + ", ".join(found)


def _kernels():
    """Every numba dispatcher defined in physics/ (bench excluded), by module."""
    import importlib
    import pkgutil

    from numba.core.registry import CPUDispatcher
    found = []
    for info in pkgutil.walk_packages(physics.__path__, "physics."):
        if ".bench" in info.name:
            continue
        module = importlib.import_module(info.name)
        found += [v for v in vars(module).values()
                  if isinstance(v, CPUDispatcher) and v.py_func.__module__ == module.__name__]
    return found


def _names_used(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names_used(const)
    return names


@pytest.mark.parametrize("option, default", [("fastmath", False), ("error_model", "python"), ("_nrt", True)])
def test_no_helper_takes_its_compile_options_from_whichever_caller_compiled_it_first(option, default):
    """numba gives a helper without a fastmath, error_model or _nrt option of its own the
    option of the kernel that compiles it first, and the disk cache keeps that build: a
    helper that kernels of different options reach must state its own, or its rounding
    (fastmath, error_model) or its speed (_nrt: reference counting of every array it
    touches) depends on the order the kernels were compiled in."""
    kernels = _kernels()
    callers = {id(k): [] for k in kernels}
    for k in kernels:
        for name in _names_used(k.py_func.__code__):
            callee = k.py_func.__globals__.get(name)
            if callee is not k and id(callee) in callers:
                callers[id(callee)].append(k)

    def own(k):
        value = k.targetoptions.get(option, default if not callers[id(k)] else None)
        return frozenset(value) if isinstance(value, (set, frozenset)) else value

    reached = {}

    def options(k, path=()):
        if id(k) not in reached:
            if own(k) is not None:
                reached[id(k)] = {own(k)}
            else:
                reached[id(k)] = set().union(*(options(c, path + (id(k),)) for c in callers[id(k)]
                                              if id(c) not in path))
        return reached[id(k)]

    mixed = [f"{k.py_func.__module__}.{k.__name__}: {options(k)}" for k in kernels
             if own(k) is None and k.targetoptions.get("inline") != "always" and len(options(k)) > 1]
    assert not mixed


def _dotted(node):
    """'a.b.c' for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id] + parts[::-1])


def _compiled_functions_python_names():
    """The compiled functions of physics/ that Python code outside tests/ names: each name
    (or dotted chain) read outside a compiled function's body, resolved through the file's
    imports to the object it is."""
    import importlib
    import importlib.util
    jitted = ("kernel", "helper", "njit")
    found = set()
    for path in [ROOT / "app.py"] + [p for package in LAYERS for p in _modules(package)]:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        local = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
                for alias in node.names:
                    local[alias.asname or alias.name] = f"{base}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:        # `import a.b` binds a; `import a.b as c` binds c to a.b
                    bound = alias.name if alias.asname else alias.name.split(".")[0]
                    local[alias.asname or bound] = bound
        read = []

        def visit(node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(ast.unparse(d).split("(")[0].split(".")[-1] in jitted for d in node.decorator_list):
                    return
            dotted = _dotted(node) if isinstance(node, (ast.Name, ast.Attribute)) else None
            if dotted is not None:
                read.append(dotted)
                return
            for child in ast.iter_child_nodes(node):
                visit(child)
        visit(tree)
        for dotted in read:
            head, _, rest = dotted.partition(".")
            full = (local.get(head, f"{module}.{head}") + ("." + rest if rest else "")).split(".")
            if full[0] != "physics":
                continue
            for cut in range(1, len(full)):
                try:
                    owner = importlib.import_module(".".join(full[:cut]))
                except ImportError:
                    break
                found.add(id(getattr(owner, full[cut], None)))
    return found


def test_compiled_functions_python_calls_are_kernels_and_the_rest_helpers():
    """A compiled function that only kernels call is a helper (physics/jit.py): compiled
    without the CPython entry point, which numba would otherwise lower, optimize and
    code-generate with it for nothing. One that Python code names is a kernel (a test's
    call of a helper works too, through an uncached twin)."""
    from physics.jit import HelperDispatcher
    named = _compiled_functions_python_names()
    wrong = [f"{k.py_func.__module__}.{k.__name__}: {'kernel' if id(k) in named else 'helper'}"
             for k in _kernels() if (id(k) in named) == isinstance(k, HelperDispatcher)]
    assert not wrong, "should be " + ", ".join(wrong)
