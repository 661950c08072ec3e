"""Viscous joint damping (a URDF joint's `<dynamics damping>`, a scene joint's `damping`):
the torque (force, prismatic) −c·q̇ on each free DOF of a joint, c in N·m·s/rad (N·s/m).

The impulse and lcp families take it as a stage of its own between the velocities'
update and the solve (damp_joints): the damper's impulse at the substep's start rate,
−c h q̇, capped at the one that stops the row's two bodies relative to each other; the
solve then passes the change on through the joints. Why not backward Euler on the row,
−c h q̇/(1 + c h k): the k of the row's two bodies about their centres is larger than that
of the mechanism they are part of (a link also hangs on its other joints), so that
under-damps by 1/(1 + c h k), most on light links.
The penalty family puts the dampers into its implicit system (penalty/drives.py
add_dampers), where they are backward Euler in the whole mechanism.
"""
from ..jit import helper

from ..joint_rows import row_velocity
from ..joint_types import N_FREE
from ..quat import rotate, rotate_inv
from .row_ops import plain_k


@helper(cache=True, error_model="numpy", _nrt=False)
def apply_row_impulse(row_J, r, i, side, lam, body_inv_mass, body_inv_inertia, body_quat, body_vel, body_omega):
    """V += M⁻¹ J_rᵀ λ on one side (0: a, 1: b) of row r, body i."""
    o = 6 * side
    im = body_inv_mass[i]
    body_vel[i, 0] += im * row_J[r, o] * lam
    body_vel[i, 1] += im * row_J[r, o + 1] * lam
    body_vel[i, 2] += im * row_J[r, o + 2] * lam
    qx, qy, qz, qw = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
    bx, by, bz = rotate_inv(qx, qy, qz, qw, row_J[r, o + 3] * lam, row_J[r, o + 4] * lam, row_J[r, o + 5] * lam)
    wx, wy, wz = rotate(qx, qy, qz, qw, body_inv_inertia[i, 0] * bx, body_inv_inertia[i, 1] * by,
                        body_inv_inertia[i, 2] * bz)
    body_omega[i, 0] += wx
    body_omega[i, 1] += wy
    body_omega[i, 2] += wz


@helper(cache=True, error_model="numpy", _nrt=False)
def damp_joints(bodies, joints, drives, rows, h, impulse, grounded, energy, track):
    """Each joint with damping c > 0, each of its free rows r in turn (Gauss–Seidel): the
    impulse λ = −q̇·min(c h, 1/k), q̇ = J·V, k = J M⁻¹ Jᵀ of the row's two bodies, kept in
    impulse[r]. An update takes the share α = min(c h k, 1) of the row's speed and the
    kinetic energy falls by α(1 − α/2) q̇²/k: never a gain, whatever c and h (an infinite c
    locks the joint). With `track`, half the work λ·q̇ goes into energy[k−1, 1] of the
    joint's grounded group k (the impulse step's energy projection), the other half at the
    substep's end speeds (add_damper_work): the trapezoid, as the joints' friction's work.
    Rows must hold the current poses."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
    joint_type, joint_body, row_start, row_count = joints.type, joints.body, joints.row_start, joints.row_count
    damping, row_J = drives.damping, rows.J
    for j in range(joint_type.shape[0]):
        c = damping[j]
        if c <= 0.0:
            continue
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        g = max(grounded[a], grounded[b]) - 1 if track else -1
        end = row_start[j] + row_count[j]
        for r in range(end - N_FREE[joint_type[j]], end):
            k = plain_k(row_J, r, a, b, body_inv_mass, body_inv_inertia, body_quat)
            v = row_velocity(row_J, r, a, b, body_vel, body_omega)
            lam = -v * min(c * h, 1.0 / k) if k > 0.0 else 0.0
            impulse[r] = lam
            if g >= 0:
                energy[g, 1] += 0.5 * lam * v
            apply_row_impulse(row_J, r, a, 0, lam, body_inv_mass, body_inv_inertia, body_quat, body_vel, body_omega)
            apply_row_impulse(row_J, r, b, 1, lam, body_inv_mass, body_inv_inertia, body_quat, body_vel, body_omega)


@helper(cache=True, error_model="numpy", _nrt=False)
def add_damper_work(bodies, joints, drives, rows, impulse, grounded, energy, col):
    """energy[k−1, col] += ½ Σ λ_r·q̇_r over the damped joints' free rows of group k: the
    second half of the dampers' work (damp_joints' impulses λ) at the substep's end speeds."""
    body_vel, body_omega = bodies.vel, bodies.omega
    joint_type, joint_body, row_start, row_count = joints.type, joints.body, joints.row_start, joints.row_count
    damping, row_J = drives.damping, rows.J
    for j in range(joint_type.shape[0]):
        if damping[j] <= 0.0:
            continue
        a = joint_body[j, 0]
        b = joint_body[j, 1]
        g = max(grounded[a], grounded[b]) - 1
        if g < 0:
            continue
        end = row_start[j] + row_count[j]
        for r in range(end - N_FREE[joint_type[j]], end):
            energy[g, col] += 0.5 * impulse[r] * row_velocity(row_J, r, a, b, body_vel, body_omega)
