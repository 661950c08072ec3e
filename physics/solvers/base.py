"""SolverBase: what every solver family is and does, written once.

A family (one package under physics/solvers/, one line in FAMILIES) subclasses it and
gives:

    name, description     its key (scene files, --solver, the API) and one line for menus
    HONOURS               the features it acts on: "limits", "friction", "damping", "motors"
                          of joints,
                          "couplings" between joints (World.add_coupling);
                          "contacts", "restitution" (World.unhonoured names the rest)
    SETTINGS              its settings (physics/settings.py Setting entries)
    PANEL                 how the panel lays them out: rows of setting names (a row of
                          one or two), in order; WHEN {name: (setting, values)} shows a name
                          only while that setting has one of those values; SIMULATION the
                          names shown beside Δt in the Simulation section (substeps)
    params(world, coupled)    the kernel's settings for one step call, a named tuple
                              (its Params type: one field per number the kernel reads)
    run(world, call, n, t0)   one kernel call of at most n steps from time t0; returns the
                              steps done (fewer: a blow-up, or contact buffers to grow)
    finish(world, call, done) the SolverStats of the call

and may override begin/after_run (per-call preparation and what a family adds up over
the kernel calls of one step call), model_changed (its caches of the layout), substep,
save_state/restore_state (what it carries between steps beyond the World's state),
readouts and notes (the panel's lines), and COMPILE_WEIGHT, VARIANT_WEIGHT,
ROBOT_VARIANT_WEIGHT / warm_up_kernels for the first launch's warm-up (shell/warmup.py),
ROBOT_FEATURES_ALWAYS (robot_features). The step loop, the
settings' checks and the panel's layout are here, so the World, the panel, the command
line and the scene files ask the solver object and never its name.
"""
from collections import namedtuple

from ..joint_rows import drive_use
from ..settings import by_name, checked, defaults
from .stats import SolverStats

Readout = namedtuple("Readout", "label text help warn")
"""One line of the panel's solver readouts: label, value text, tooltip, warn (bool)."""


def compiled_variants(make_kernel):
    """kernel_for(*flags): make_kernel(*flags)'s kernel, made once per process for each set of
    flags. make_kernel closes its compiled kernel over the flags (compile-time constants), so
    numba prunes the branches they switch off before typing — a world compiles only the
    paths it can take, the first launch included — and caches each variant on disk apart
    (numba keys a closure's cache by its constants). kernel_for.made holds them by flags."""
    made = {}

    def kernel_for(*flags):
        flags = tuple(bool(f) for f in flags)
        if flags not in made:
            made[flags] = make_kernel(*flags)
        return made[flags]
    kernel_for.made = made
    return kernel_for


class SolverBase:
    """A solver family: its settings, the one step loop over its kernel, its caches of
    the layout and what the panel shows of it."""
    name = ""
    description = ""
    HONOURS = frozenset()
    SETTINGS = ()
    PANEL = ()
    WHEN = {}
    SIMULATION = ()
    # CPU s its kernels take to compile on a cold cache (shell/compile_times.py, per step),
    # of which WARM_UP_WEIGHT are warm_up_kernels' own: the first launch's progress plan;
    # VARIANT_WEIGHT: what each later scene's step compiles on average (its step kernel
    # again for the feature sets the scenes ask for: impulse's Features); ROBOT_VARIANT_WEIGHT:
    # the variant with the robots' features, which the first scene with hulls compiles
    COMPILE_WEIGHT = 30.0
    WARM_UP_WEIGHT = 0.0
    VARIANT_WEIGHT = 0.0
    ROBOT_VARIANT_WEIGHT = 0.0
    # whether its kernel is compiled with the robots' features (the hulls' narrow phase, the
    # couplings between joints) for every world, not only for those with hulls or couplings
    # (World.robot_features): one variant for all, when a second costs more to compile than
    # the features add to every world's kernel
    ROBOT_FEATURES_ALWAYS = False

    def __init__(self):
        self.settings = defaults(self.SETTINGS)
        self.stats = SolverStats()
        self._layout = {}                   # name → data built on the layout (cached)
        self._layout_version = None

    # ------------------------------------------------------------------ settings
    def configure(self, **values):
        """Check every value against the schema first, then apply them all."""
        self.settings.update(checked(self.SETTINGS, values, "solver"))
        self.settings_changed()

    def settings_changed(self):
        """The settings changed (a family whose caches depend on them drops them)."""

    def schema(self):
        """{name: Setting} of this family's settings."""
        return by_name(self.SETTINGS)

    def substep(self, dt):
        """The step of one solve (s): Δt, unless the family substeps."""
        return dt

    # ------------------------------------------------------------------ the layout
    def layout(self, world, key, build):
        """Data built from the world's layout (bodies, joints, rows), made by build(world)
        once per layout: the one cache idiom of the families (dropped when the model's
        version moves on, or by model_changed)."""
        if self._layout_version != world.model.version:
            self._layout.clear()
            self._layout_version = world.model.version
        if key not in self._layout:
            self._layout[key] = build(world)
        return self._layout[key]

    def model_changed(self, world):
        """Bodies, joints or rows were added: drop what was built on the layout."""
        self._layout.clear()
        self._layout_version = None

    # ------------------------------------------------------------------ the step
    def step(self, world, n, coupled=False):
        """n steps of Δt in as few kernel calls as it takes: a call stops early when the
        contact buffers overflowed (they grow and the rest runs) or when the family asks
        for another call (after_run), else at a blow-up. `coupled`: the velocities already
        hold this step's gravity and forces (World._coupled_step). Returns the steps done
        before a blow-up (n when none)."""
        self._call_drives = self.drive_use(world)     # asked once per call (drive_use)
        try:
            call = self.begin(world, coupled)
            call["n"] = n
            done = 0
            while done < n:
                chunk = n - done
                k = self.run(world, call, chunk, world.time + done * world.dt)
                grew = world.contacts_stepped()
                done += k
                again = self.after_run(world, call, k)
                if k < chunk and not (grew or again):
                    break                       # blew up
            self.stats = self.finish(world, call, done)
        finally:
            self._call_drives = None
        return done

    def begin(self, world, coupled):
        """What the kernel calls of one step call share (the bundles, the params, whether the
        kernel has the robots' features …)."""
        return {"bundles": world.kernel_bundles(self.free_rows_used(world), coupled),
                "params": self.params(world, coupled), "robot": self.robot_features(world)}

    def robot_features(self, world):
        """Whether its kernel for the world is compiled with the hulls' narrow phase and the
        couplings between joints (ROBOT_FEATURES_ALWAYS, else World.robot_features); the
        world's contact_data and coupling_data are then asked for them."""
        return self.ROBOT_FEATURES_ALWAYS or world.robot_features()

    def params(self, world, coupled):
        raise NotImplementedError

    def run(self, world, call, n, t0):
        raise NotImplementedError

    def after_run(self, world, call, k):
        """After each kernel call (k steps done): add up what the family counts; True to
        call the kernel again although it stopped early (the family made room)."""
        return False

    def finish(self, world, call, done):
        return SolverStats(steps=done)

    _call_drives = None          # drive_use's answer during a step call (nothing changes them there)

    def drive_use(self, world):
        """What the joints' limits, friction and motors do (joint_rows.DriveUse): the same
        answer through one step call, asked of the arrays outside one."""
        if self._call_drives is not None:
            return self._call_drives
        return drive_use(world.model.joints, world.control.joints)

    def free_rows_used(self, world):
        """Per joint, 1 where its free rows carry friction or a motor, damping acts along
        them (joint_rows says) or a coupling reads them and the joint's angle: the rows
        and the angle are written exactly at every step then (compute_joint_rows)."""
        use = self.drive_use(world)
        used = use.free | use.damped if use.any_damped else use.free
        coupled = world.model.couplings.joint
        if coupled.shape[0] == 0:
            return used
        used = used.copy()
        used[coupled.ravel()] = 1
        return used

    # ------------------------------------------------------------------ state between steps
    def save_state(self, world):
        """What the family carries from one step to the next beyond the World's state
        (None: nothing)."""
        return None

    def restore_state(self, world, saved):
        """Back to what save_state returned (World.restore_state)."""

    # ------------------------------------------------------------------ the panel
    def panel_rows(self):
        """The rows of setting names the panel shows now (PANEL, less what WHEN hides)."""
        out = []
        for row in self.PANEL:
            shown = tuple(name for name in row if self.shown(name))
            if shown:
                out.append(shown)
        return out

    def shown(self, name):
        """Whether the panel shows this setting with the current settings (WHEN)."""
        if name not in self.WHEN:
            return True
        setting, values = self.WHEN[name]
        return self.settings[setting] in values

    def readouts(self, stats, capped=(0, 0)):
        """The panel's lines on the last solve: [Readout]. `capped`: (steps the time cap
        cut, steps counted) since the scene was loaded or reset."""
        return [Readout("solve", f"{stats.solve_ms:.3f} ms", "Wall-clock time of one step's solve (ms).", False)]

    def notes(self, world):
        """Warnings about settings that cannot act in this world: [str]."""
        return []

    # ------------------------------------------------------------------ the first launch
    @staticmethod
    def warm_up_kernels():
        """Compile kernels the family's step calls, on their own and without a World, so
        that another process can fill numba's cache with them while this family's step
        compiles the rest (the first launch's warm-up runs it in its other process).
        Families that share kernels share this function. Default: nothing."""

    # ------------------------------------------------------------------ benchmarks
    def options(self, text):
        """Settings from a benchmark's option text ("FAMILY:OPTION,…"): each comma-separated
        part NAME=VALUE, or a family's shorthand (shorthand); values as in a scene file."""
        out = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, eq, value = part.partition("=")
            if not eq:
                out.update(self.shorthand(part))
                continue
            setting = self.schema().get(name)
            if setting is None:
                raise ValueError(f"{self.name} has no setting {name!r} (settings: {', '.join(self.schema())})")
            out[name] = value if setting.kind == "choice" else (value.lower() == "true" if setting.kind == "bool"
                                                                 else float(value))
        return out

    def shorthand(self, text):
        """A family's short benchmark option (e.g. a preset's name): {setting: value}."""
        raise ValueError(f"{self.name}: unknown option {text!r} (give NAME=VALUE)")

    def describe(self, world):
        """Short facts on how the family runs this world, for benchmark records: {key: value}."""
        return {}
