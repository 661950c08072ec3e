"""The stiff step's system laid out again with this step's contacts between moving bodies.

A contact spring between two dynamic bodies couples their velocities as a joint does: its
rows add w JᵀJ to both bodies' diagonal blocks and to the block between them. The joints'
layout (assemble.build_plan, once per layout) has no such block, so while contacts join
dynamic bodies the system is laid out on the union of the joint graph and the contact
graph (block_ldl.plan_layout: a minimum-degree order and its fill) and factored exactly,
as the joints are: a stack or a heap is one system, with no iteration between its bodies
(an iteration between stiff springs is an explicit step again: block_ldl's docstring).
The layout is kept while the touching pairs stay the same (a resting pile is planned once
per kernel call); contacts against static bodies only add to a body's own block and need
none.
"""
import numpy as np
from ...jit import helper

from ...contacts import N_BLOCKS, N_NOW
from .assemble import Plan
from .block_ldl import find_slot, plan_layout


@helper(cache=True)
def contact_pair_keys(contacts, body_node):
    """The sorted keys a·n + b (a < b, n bodies) of this step's touching pairs of two dynamic
    bodies (body_node ≥ 0), one per contact block."""
    n_blocks = contacts.buffers.n[N_BLOCKS] if contacts.buffers.n[N_NOW] > 0 else 0
    row_body, block_start = contacts.rows.body, contacts.rows.block_start
    n = body_node.shape[0]
    keys = np.empty(n_blocks, np.int64)
    m = 0
    for blk in range(n_blocks):
        r = block_start[blk]
        a, b = row_body[r, 0], row_body[r, 1]
        if body_node[a] >= 0 and body_node[b] >= 0:
            keys[m] = min(a, b) * n + max(a, b)
            m += 1
    return np.sort(keys[:m])


@helper(cache=True)
def same_keys(a, b):
    """Whether two key arrays are equal."""
    if a.shape[0] != b.shape[0]:
        return False
    for i in range(a.shape[0]):
        if a[i] != b[i]:
            return False
    return True


@helper(cache=True)
def contact_plan(plan, joint_body, keys, couplings):
    """The Plan of the union of the joints (joint_body (m,2)), the couplings between joints
    (each two of a coupling's bodies; None: none) and the contact pairs `keys`
    (contact_pair_keys), over the dynamic bodies of `plan` (the joints' own layout): a new
    layout with room for its off-diagonal blocks; the per-body and per-row scratch is
    plan's."""
    n = plan.body_node.shape[0]
    nj = joint_body.shape[0]
    nc = 0 if couplings is None else couplings.body.shape[0]
    npairs = nj + 6 * nc
    pair_a = np.empty(npairs + keys.shape[0], np.int64)
    pair_b = np.empty(npairs + keys.shape[0], np.int64)
    dynamic = np.empty(n, np.bool_)
    for i in range(n):
        dynamic[i] = plan.body_node[i] >= 0
    for j in range(nj):
        pair_a[j], pair_b[j] = joint_body[j, 0], joint_body[j, 1]
    if couplings is not None:                   # entries e < f of each coupling's four (a pair of one body: none)
        cb = couplings.body
        p = nj
        for c in range(nc):
            for e in range(4):
                for f in range(e + 1, 4):
                    pair_a[p], pair_b[p] = cb[c, e // 2, e % 2], cb[c, f // 2, f % 2]
                    p += 1
    for c in range(keys.shape[0]):
        pair_a[npairs + c], pair_b[npairs + c] = keys[c] // n, keys[c] % n
    body_node, node_body, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, slot, late = plan_layout(
        dynamic, pair_a, pair_b)
    nu = up_node.shape[0]
    return Plan(body_node, node_body, up_ptr, up_node, pair_ptr, pair_lo, pair_hi, pair_target, slot[:nj].copy(),
                late[:nj].copy(), plan.diag0, np.zeros((nu, 36)), plan.rhs0, plan.diag, np.zeros((nu, 36)),
                plan.rhs, plan.inertia_world, plan.inv_inertia_world, plan.row_w, plan.row_g, plan.c_lin, plan.engaged,
                plan.drive_kind, plan.drive_max, plan.drive_clamped, plan.drive_dir, plan.pos0, plan.quat0, plan.vel0,
                plan.omega0, plan.vel_k, plan.omega_k)


@helper(cache=True)
def pair_slot(plan, a, b):
    """(slot, b_late) of the block between bodies a and b in plan (−1: one is static)."""
    na, nb = plan.body_node[a], plan.body_node[b]
    if na < 0 or nb < 0:
        return -1, 0
    return find_slot(plan.up_ptr, plan.up_node, min(na, nb), max(na, nb)), 1 if nb > na else 0
