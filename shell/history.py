"""Rewind and replay: a ring buffer of whole world states and the replay cursor.

Every `RECORD_PERIOD` of simulated time (k = round(RECORD_PERIOD / Δt) steps, at least
one: every 2nd step of the door at Δt = 10 ms, every step of rope_tow at 15 ms) the
World's own `save_state()` (bodies, joints, row impulses, clock, motors, ropes) is
packed into one row of a preallocated byte array: the buffer holds the last
`seconds` (default 30 s) and its memory is fixed when the first state is packed,
`capacity × bytes_per_state` (`Timeline.memory_bytes`), whatever happens later. A
layout change (a body, joint or rope segment added) clears it: an old state no longer
fits the world.

Replay re-simulates: `seek(t)` restores the recorded state at or before t, and playing
on steps the world as usual (deterministic stepping: the same states, bit for bit, the
test checks it). While the cursor is behind the newest state nothing is recorded;
every re-simulated state that lands on a recorded one is compared with it. The
recorded future is dropped (a branch) when the model is edited while scrubbed (any
change of the model's arrays: joint friction, limits, masses, Δt, solver settings), or
when a re-simulated state differs from the recorded one (a mouse drag, a motor target
typed in); `resume()` drops it on request; `present(world)` goes back to the newest.
"""
import hashlib
import math
from bisect import bisect_right

import numpy as np

from ui.sliced import SlicedWorld

RECORD_PERIOD = 1.0 / 60.0      # s of simulated time between recorded states
DEFAULT_SECONDS = 30.0


# ---------------------------------------------------------------------------- packing
def _layout(obj, leaves):
    """The structure of a save_state() value, its leaves appended to `leaves` as
    (kind, shape, dtype): arrays as bytes, Python numbers as one float64 each."""
    if isinstance(obj, dict):
        return ("d", tuple((k, _layout(v, leaves)) for k, v in obj.items()))
    if isinstance(obj, (tuple, list)):
        return ("t" if isinstance(obj, tuple) else "l", tuple(_layout(v, leaves) for v in obj))
    if isinstance(obj, np.ndarray):
        leaves.append(("a", obj.shape, obj.dtype.str))
        return ("a", len(leaves) - 1)
    if obj is None or isinstance(obj, (bool, int, float, np.floating, np.integer)):
        kind = "n" if obj is None else ("b" if isinstance(obj, bool) else
                                        ("i" if isinstance(obj, (int, np.integer)) else "f"))
        leaves.append((kind, (), "<f8"))
        return (kind, len(leaves) - 1)
    raise TypeError(f"save_state holds a {type(obj).__name__}: the timeline can't pack it")


def _flat(obj, out):
    if isinstance(obj, dict):
        for v in obj.values():
            _flat(v, out)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            _flat(v, out)
    else:
        out.append(obj)
    return out


class Packer:
    """Packs save_state() values of one layout into byte rows and back, exactly."""

    def __init__(self, state):
        self.leaves = []
        self.tree = _layout(state, self.leaves)
        self.offsets = []
        off = 0
        for kind, shape, dtype in self.leaves:
            self.offsets.append(off)
            off += int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize if kind == "a" else 8
        self.nbytes = off

    def fits(self, state):
        leaves = []
        return _layout(state, leaves) == self.tree and leaves == self.leaves

    def pack(self, state, row):
        for (kind, _, dtype), off, v in zip(self.leaves, self.offsets, _flat(state, [])):
            if kind == "a":
                b = np.ascontiguousarray(v, dtype=dtype).view(np.uint8).reshape(-1)
                row[off:off + b.size] = b
            else:
                row[off:off + 8] = np.array([np.nan if v is None else float(v)], "<f8").view(np.uint8)

    def unpack(self, row):
        vals = []
        for (kind, shape, dtype), off in zip(self.leaves, self.offsets):
            if kind == "a":
                n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
                vals.append(row[off:off + n].copy().view(dtype).reshape(shape))
            else:
                x = float(row[off:off + 8].copy().view("<f8")[0])
                vals.append(None if kind == "n" else bool(x) if kind == "b" else int(x) if kind == "i" else x)
        return self._build(self.tree, vals)

    def _build(self, node, vals):
        kind, body = node
        if kind == "d":
            return {k: self._build(v, vals) for k, v in body}
        if kind in ("t", "l"):
            items = [self._build(v, vals) for v in body]
            return tuple(items) if kind == "t" else items
        return vals[body]


def model_fingerprint(world):
    """A hash of what the user edits: the model's arrays and numbers, the solver family
    and every family's settings (not the state, not the motor program's targets)."""
    h = hashlib.blake2b(digest_size=16)
    for name, val in sorted(vars(world.model).items()):
        if hasattr(val, "names") and hasattr(val, "count"):          # an ArrayTable
            for n in val.names:
                h.update(n.encode())
                h.update(np.ascontiguousarray(getattr(val, n)).tobytes())
        elif isinstance(val, np.ndarray):
            h.update(np.ascontiguousarray(val).tobytes())
        elif isinstance(val, (int, float, str, bool, tuple)):
            h.update(repr((name, val)).encode())
    h.update(repr((world.dt, world.solver, [sorted(world.solver_settings(f).items()) for f in world.solvers],
                   [(n, r.radius, len(r.positions)) for n, r in world.ropes.items()])).encode())
    return h.digest()


# ---------------------------------------------------------------------------- timeline
class Timeline:
    """The last `seconds` of world states, one every `RECORD_PERIOD` of simulated time."""

    def __init__(self, seconds=DEFAULT_SECONDS, period=RECORD_PERIOD):
        self.seconds = float(seconds)
        self.period = float(period)
        self.packer = None
        self.rows = None              # (capacity, bytes_per_state) uint8, allocated once per layout
        self.times = None
        self.steps = None
        self.start = 0                # slot of the oldest state
        self.count = 0
        self.cursor = None            # index (0 = oldest) of the state replay is at; None: live
        self.mismatches = 0           # re-simulated states that differed from the recorded ones
        self.branches = 0             # times the recorded future was dropped
        self._fingerprint = None
        self._scratch = None

    # -------------------------------------------------------------- size
    @property
    def capacity(self):
        return self.rows.shape[0] if self.rows is not None else 0

    @property
    def bytes_per_state(self):
        return self.packer.nbytes if self.packer else 0

    @property
    def memory_bytes(self):
        """Bytes held by the buffer: capacity × (bytes per state + 16 for time and step)."""
        return 0 if self.rows is None else self.rows.nbytes + self.times.nbytes + self.steps.nbytes

    def capacity_for(self, dt):
        k = self.every(dt)
        return int(math.ceil(self.seconds / (k * dt))) + 2

    def every(self, dt):
        """Steps between recorded states at step dt."""
        return max(1, int(round(self.period / dt)))

    def set_seconds(self, seconds, world=None):
        """Another length: the buffer is made anew (what it held is kept if it fits)."""
        self.seconds = float(seconds)
        kept = [(self.times[self._slot(i)], self.steps[self._slot(i)], self.rows[self._slot(i)].copy())
                for i in range(self.count)] if self.rows is not None else []
        self.rows = None
        self.clear()
        if world is not None and kept:
            self._allocate(world.dt)
            for t, s, row in kept[-self.capacity:]:
                self._append_row(t, s, row)

    # -------------------------------------------------------------- ring
    def _slot(self, i):
        return (self.start + i) % self.capacity

    def clear(self):
        self.start = self.count = 0
        self.cursor = None
        self._fingerprint = None

    def _allocate(self, dt):
        cap = self.capacity_for(dt)
        if self.rows is None or self.rows.shape != (cap, self.packer.nbytes):
            self.rows = np.zeros((cap, self.packer.nbytes), np.uint8)
            self.times = np.zeros(cap)
            self.steps = np.zeros(cap, np.int64)
        self.start = self.count = 0
        self._scratch = np.zeros(self.packer.nbytes, np.uint8)

    def _append_row(self, t, step, row=None, state=None):
        if self.count == self.capacity:                 # full: the oldest goes
            self.start = (self.start + 1) % self.capacity
            self.count -= 1
        slot = self._slot(self.count)
        if row is not None:
            self.rows[slot] = row
        else:
            self.packer.pack(state, self.rows[slot])
        self.times[slot], self.steps[slot] = t, step
        self.count += 1

    def time_at(self, i):
        return float(self.times[self._slot(i)])

    def step_at(self, i):
        return int(self.steps[self._slot(i)])

    def state_at(self, i):
        """The i-th recorded state (0 = oldest) as save_state() gave it."""
        return self.packer.unpack(self.rows[self._slot(i)])

    def span(self):
        """(oldest, newest) recorded time, or None."""
        return (self.time_at(0), self.time_at(self.count - 1)) if self.count else None

    def index_at(self, t):
        """Index of the newest state at or before time t (the oldest if t is before it)."""
        ts = [self.time_at(i) for i in range(self.count)]
        return max(0, bisect_right(ts, t + 1e-9) - 1)

    # -------------------------------------------------------------- recording
    @property
    def live(self):
        return self.cursor is None

    def steps_until_due(self, world):
        """Steps to run before the next state is due (the recorder slices at it)."""
        if self.count == 0:
            return 1
        last = self.step_at(self.count - 1) if self.live else self.step_at(self.cursor)
        done = world.state.step_count - last
        return max(1, self.every(world.dt) - done) if done >= 0 else 1

    def capture(self, world, force=False):
        """After steps: record the world's state if one is due (live), or follow the
        recorded states (replay). Returns True when a state was recorded or matched."""
        t, step = world.time, world.state.step_count
        if self.count and self.live:
            last_t, last_step = self.time_at(self.count - 1), self.step_at(self.count - 1)
            if t < last_t - 1e-12 or step < last_step:       # time went back (a reset): start over
                self.clear()
            elif step == last_step or (not force and step - last_step < self.every(world.dt)):
                return False
        if not self.live:
            return self._follow(world, t, step)
        state = world.save_state()
        if self.packer is None or not self.packer.fits(state):
            self.packer = Packer(state)
            self.rows = None
        if self.rows is None or self.count == 0 and self.rows.shape[0] != self.capacity_for(world.dt):
            self._allocate(world.dt)
        self._append_row(t, step, state=state)
        return True

    def _follow(self, world, t, step):
        """Replaying: the cursor follows the re-simulated state; a state unlike the
        recorded one, or an edit of the model, drops the recorded future."""
        if self._fingerprint is not None and model_fingerprint(world) != self._fingerprint:
            self.branch()
            return self.capture(world, force=True)
        i = self.cursor
        while i + 1 < self.count and self.step_at(i + 1) <= step:
            i += 1
        self.cursor = i
        if self.step_at(i) == step and abs(self.time_at(i) - t) < 1e-12:
            state = world.save_state()
            if not self.packer.fits(state):
                self.branch()
                return self.capture(world, force=True)
            self.packer.pack(state, self._scratch)
            if not np.array_equal(self._scratch, self.rows[self._slot(i)]):
                self.mismatches += 1
                self.branch()
                return self.capture(world, force=True)
        if i == self.count - 1 and step >= self.step_at(i):
            self.cursor = None                # caught up with the present: live again
            self._fingerprint = None
            return self.capture(world)
        return False

    # -------------------------------------------------------------- replay
    def seek(self, world, t):
        """Scrub: restore the recorded state at or before time t. Returns its time."""
        if self.count == 0:
            return world.time
        if self.live:
            self.capture(world, force=True)   # the present, exactly, to come back to
        i = self.index_at(t)
        world.restore_state(self.state_at(i))
        self.cursor = i
        self._fingerprint = model_fingerprint(world)
        if i == self.count - 1:
            self.cursor, self._fingerprint = None, None
        return self.time_at(i)

    def step_back(self, world, n=1):
        """n recorded states back from where the world is."""
        if self.count == 0:
            return world.time
        i = (self.cursor if not self.live else self.count - 1) if self.count else 0
        if self.live and self.step_at(self.count - 1) != world.state.step_count:
            self.capture(world, force=True)
            i = self.count - 1
        return self.seek(world, self.time_at(max(0, i - n)))

    def present(self, world):
        """Back to the newest recorded state and live recording."""
        if not self.live and self.count:
            world.restore_state(self.state_at(self.count - 1))
        self.cursor, self._fingerprint = None, None
        return world.time

    def branch(self):
        """Drop every state after the cursor: the world goes on live from there."""
        if self.live:
            return
        self.count = self.cursor + 1
        self.cursor, self._fingerprint = None, None
        self.branches += 1

    def check_edits(self, world):
        """Once a frame: an edit of the model while scrubbed branches at once."""
        if not self.live and self._fingerprint is not None and model_fingerprint(world) != self._fingerprint:
            self.branch()
            return True
        return False

    def resume(self, world):
        """Resume live from the scrubbed state, discarding the recorded future."""
        self.branch()
        return world.time


class RecordingWorld(SlicedWorld):
    """The world as the frame driver sees it, recording into a Timeline: advance_steps
    runs in slices that end where a state is due and captures after each."""

    def __init__(self, world, timeline):
        super().__init__(world)
        self.timeline = timeline

    def slice_steps(self):
        return self.timeline.steps_until_due(self.world)

    def after_slice(self):
        self.timeline.capture(self.world)
