"""The joint-type registry: every fact about a joint type, in one place.

Each joint owns a block of constraint rows (joint_rows.py writes them), in this order:
`n_eq` equality rows, `n_limit` limit rows, `n_free` free-DOF rows (friction, motors).
`translational_eq` of the equality rows are translational (point or slide rows), the
rest rotational; `linear_free` says the free DOF is a slide (prismatic). `limits` names
what each limit slot holds; `motor` says whether the joint takes a motor (1 free DOF).

Numba kernels read the same facts from the constant arrays N_EQ, N_LIMIT, N_FREE
(indexed by the type code), so a new joint type is one entry here plus its rows in
joint_rows.compute_joint_rows.
"""
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JointType:
    name: str
    code: int
    n_eq: int
    n_limit: int
    n_free: int
    translational_eq: int
    linear_free: bool = False
    limits: tuple = ()          # what limit slot k holds (Joint.limit(dof=k))
    readouts: tuple = ()        # what joint_q[j, k] holds

    @property
    def n_rows(self):
        return self.n_eq + self.n_limit + self.n_free

    @property
    def motor(self):
        return self.n_free == 1


FIXED, SPHERICAL, REVOLUTE, UNIVERSAL, PRISMATIC = range(5)
_TYPES = (
    JointType("fixed", FIXED, 6, 0, 0, 3),
    JointType("spherical", SPHERICAL, 3, 2, 3, 3, limits=("swing cone (rad)", "twist (rad)"),
              readouts=("swing (rad)", "twist (rad)")),
    JointType("revolute", REVOLUTE, 5, 1, 1, 3, limits=("angle (rad)",), readouts=("angle (rad)",)),
    JointType("universal", UNIVERSAL, 4, 2, 2, 3, limits=("first angle (rad)", "second angle (rad)"),
              readouts=("first angle (rad)", "second angle (rad)")),
    JointType("prismatic", PRISMATIC, 5, 1, 1, 2, linear_free=True, limits=("slide (m)",), readouts=("slide (m)",)),
)
JOINT_TYPES = {t.name: t for t in _TYPES}           # name → JointType
BY_CODE = {t.code: t for t in _TYPES}               # code → JointType
JOINT_TYPE_NAMES = {t.code: t.name for t in _TYPES}

# the same facts for numba kernels (global arrays are compile-time constants there)
N_EQ = np.array([t.n_eq for t in _TYPES], np.int64)
N_LIMIT = np.array([t.n_limit for t in _TYPES], np.int64)
N_FREE = np.array([t.n_free for t in _TYPES], np.int64)
