"""Named numpy arrays that share their first dimension and grow in amortized O(1).

One `ArrayTable` per kind of entry (bodies, joints, rows) and per owner (model, state,
control, work): `table.add(k)` appends k zero (or `fill`) entries and returns the first
index. Storage doubles when full, so building N entries costs O(N); each named array is
a contiguous view of the first `count` entries, re-sliced after every add (so hold the
table, never a bare array, across an add).
"""
import numpy as np


class ArrayTable:
    """spec: name → (trailing shape, dtype, fill value)."""

    def __init__(self, **spec):
        clash = set(spec) & {"count", "names", "add", "copy", "load"}
        if clash:
            raise ValueError(f"ArrayTable: {sorted(clash)} would hide the table's own attributes")
        self._spec = spec
        self.count = 0
        self._capacity = 0
        self._storage = {}
        for name, (tail, dtype, fill) in spec.items():
            self._storage[name] = np.full((0,) + tuple(tail), fill, dtype)
        self._slice()

    @property
    def names(self):
        return tuple(self._spec)

    def add(self, k=1):
        """Append k entries (filled with each array's fill value); returns the first index."""
        first = self.count
        if first + k > self._capacity:
            capacity = max(first + k, 2 * self._capacity, 8)
            for name, (tail, dtype, fill) in self._spec.items():
                grown = np.full((capacity,) + tuple(tail), fill, dtype)
                grown[:first] = self._storage[name][:first]
                self._storage[name] = grown
            self._capacity = capacity
        self.count = first + k
        self._slice()
        return first

    def _slice(self):
        for name in self._spec:
            setattr(self, name, self._storage[name][:self.count])

    def copy(self, names=None):
        """A dict of copies of the named arrays (all by default)."""
        return {name: getattr(self, name).copy() for name in (names or self._spec)}

    def load(self, saved):
        """Write arrays saved by copy() back (same count)."""
        for name, arr in saved.items():
            getattr(self, name)[:] = arr
