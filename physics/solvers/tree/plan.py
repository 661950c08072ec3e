"""The spanning tree of the joint graph (build_tree_plan, once per layout) and the Tree
bundle of arrays the direct solve reads and writes (make_tree)."""
from collections import deque, namedtuple
from dataclasses import dataclass

import numpy as np

from ...joint_types import BY_CODE

@dataclass
class TreePlan:
    """The tree of one joint graph, built once per topology (`build_tree_plan`).

    order:        tree joints, leaves first (the elimination order)
    joint_child:  (nj,) the child body of each tree joint (−1: joint not in the tree)
    joint_side:   (nj,) which side (0 = a, 1 = b) of the joint the child body is
    joint_parent: (nj,) the parent body (−1: the joint hangs from a static body)
    joint_m:      (nj,) equality rows per joint (joint_types.py)
    joint_direct: (nj,) 1 if the joint is in the tree
    roots:        bodies rooting a free-floating tree
    loop_joints:  joints that close a loop (not in the tree)
    depth:        longest chain of joints from a root
    """
    order: np.ndarray
    joint_child: np.ndarray
    joint_side: np.ndarray
    joint_parent: np.ndarray
    joint_m: np.ndarray
    joint_direct: np.ndarray
    roots: np.ndarray
    loop_joints: np.ndarray
    depth: int
    n_bodies: int

    @property
    def is_tree(self):
        return len(self.loop_joints) == 0


def static_bodies(body_inv_mass, body_inv_inertia):
    """Bodies that never move (zero inverse mass and inertia), as in integrate.is_static."""
    return (np.asarray(body_inv_mass) == 0.0) & np.all(np.asarray(body_inv_inertia) == 0.0, axis=1)


def build_tree_plan(joint_body, joint_type, static):
    """Root the joint graph: dynamic bodies are nodes, all static bodies one ground node.

    Joints are taken in index order; one that would close a cycle (union-find) is a
    loop joint and stays out of the tree. Joints between two static bodies carry no
    rows and are left out altogether.
    """
    joint_body = np.asarray(joint_body, np.int64).reshape(-1, 2)
    nj = len(joint_body)
    nb = len(static)
    ground = nb                                   # the merged static node
    parent_uf = list(range(nb + 1))

    def find(x):
        while parent_uf[x] != x:
            parent_uf[x] = parent_uf[parent_uf[x]]
            x = parent_uf[x]
        return x

    def node(i):
        return ground if static[i] else int(i)

    in_tree = np.zeros(nj, np.int64)
    loops = []
    adjacency = [[] for _ in range(nb + 1)]
    for j in range(nj):
        a, b = node(joint_body[j, 0]), node(joint_body[j, 1])
        if a == ground and b == ground:
            continue
        ra, rb = find(a), find(b)
        if ra == rb:
            loops.append(j)
            continue
        parent_uf[ra] = rb
        in_tree[j] = 1
        adjacency[a].append(j)
        adjacency[b].append(j)

    joint_child = np.full(nj, -1, np.int64)
    joint_side = np.zeros(nj, np.int64)
    joint_parent = np.full(nj, -1, np.int64)
    joint_depth = np.zeros(nj, np.int64)
    bfs = []
    roots = []
    seen = np.zeros(nb + 1, bool)

    def grow(start, start_depth):
        queue = deque([(start, start_depth)])
        seen[start] = True
        while queue:
            n, d = queue.popleft()
            for j in adjacency[n]:
                if joint_child[j] >= 0:
                    continue
                a, b = node(joint_body[j, 0]), node(joint_body[j, 1])
                other, side = (b, 1) if a == n else (a, 0)
                if seen[other]:
                    continue
                joint_child[j] = other
                joint_side[j] = side
                joint_parent[j] = -1 if n == ground else n
                joint_depth[j] = d + 1
                bfs.append(j)
                seen[other] = True
                queue.append((other, d + 1))

    grow(ground, 0)
    for i in range(nb):
        if not static[i] and not seen[i] and adjacency[i]:
            roots.append(i)
            grow(i, 0)
    joint_m = np.array([BY_CODE[int(t)].n_eq for t in joint_type], np.int64).reshape(nj)
    return TreePlan(order=np.array(bfs[::-1], np.int64), joint_child=joint_child, joint_side=joint_side,
                    joint_parent=joint_parent, joint_m=joint_m, joint_direct=in_tree,
                    roots=np.array(roots, np.int64), loop_joints=np.array(loops, np.int64),
                    depth=int(joint_depth.max()) if nj else 0, n_bodies=nb)


def make_tree(plan, n_rows):
    """A Tree bundle with zeroed arrays for `plan` (TreePlan) and n_rows rows."""
    nb, nj = plan.n_bodies, len(plan.joint_child)
    return Tree(plan.order, plan.roots, plan.joint_child, plan.joint_side, plan.joint_parent, plan.joint_m,
                plan.loop_joints, np.zeros(n_rows, np.int64), np.zeros((nj, 6), np.int64), np.zeros(nj, np.int64),
                np.zeros(nj, np.int64), np.zeros((nb, 3)), np.zeros((nb, 3)), np.zeros((nb, 9)), np.zeros((nb, 6)),
                np.zeros((nb, 36)), np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nj, 18)), np.zeros((nj, 18)),
                np.zeros((nj, 9)), np.zeros((nj, 3)), np.zeros((nj, 9)), np.zeros((nj, 9)), np.zeros((nj, 15)),
                np.zeros((nj, 6)), np.zeros((max(len(plan.roots), 1), 36)), np.zeros(36), np.zeros(n_rows),
                np.full(nj, -1, np.int64), np.zeros((nj, 12)), np.zeros(1, np.int64))


Tree = namedtuple("Tree", "order roots joint_child joint_side joint_parent joint_m loop_joints row_direct "
                         "joint_rows joint_mdir joint_nldir body_v0 body_w0 body_I body_K body_D body_z body_z2 "
                         "joint_N joint_U joint_P joint_d joint_Gl joint_Ga joint_t joint_nz root_L scratch row_target "
                         "joint_motor joint_soft motors")
"""Everything the direct path reads and writes, for one joint graph: the plan (order …
loop_joints, see TreePlan), row_direct (rows,) 1 for rows in the direct solve, joint_rows
(nj,6) those rows per joint, joint_mdir / joint_nldir (nj,) how many (and how many with a
linear part); body_v0, body_w0 (nb,3) velocities before the solve, body_I (nb,9) inertia
with geometric stiffness, body_K (nb,6) that stiffness; body_D (nb,36) D_i (6×6, both
triangles), body_z, body_z2 (nb,6) momenta in / forward-pass accumulators of two right-hand
sides, joint_N (nj,18) null-space columns (6 × l), joint_U (nj,18) D_c N, joint_P (nj,9)
(Nᵀ D_c N)⁻¹, joint_d (nj,3) shift parent → child, joint_Gl / joint_Ga (nj,9) Gram⁻¹ of the
rows' linear / angular-only parts, joint_t (nj,15) targets −C, joint_nz (nj,6) Nᵀ z_c,
root_L (max(roots,1),36) factors of free-floating roots, scratch (36,); row_target (rows,) a
row value the caller's targets are built from (the impulse step's C plus its predicted drift);
joint_motor (nj,) the row of a soft motor solved with the joint (−1: none; only the impulse
family sets one, impulse/direct_sets.choose_direct_rows) and joint_soft (nj,12) its numbers:
the row's child part J_mc (0-5), 1/γ (6), bias (7), a = J_mc N (8-10), its impulse (11);
motors (1,) how many joints choose_direct_rows gave a soft motor (at most: a servo released
since keeps its count; 0: the factor and solves skip the motors' terms)."""

