"""Semi-implicit (symplectic) Euler for rigid bodies (eq. 27, seed 000; eq. 10-11, seed 001).

Velocities first from the forces, then positions from the new velocities; the
orientation quaternion advances by q += Δt/2 (ω, 0) ⊗ q and is renormalized.
A body with zero inverse mass and inertia is static and is never moved.
"""
import math

from .jit import kernel, helper

from .quat import cross, integrate_quat, rotate, rotate_inv, world_inv_inertia_times


@helper(cache=True, error_model="numpy", _nrt=False)
def is_static(body_inv_mass, body_inv_inertia, i):
    """Body i never moves: zero inverse mass and inverse inertia (the world, a static body)."""
    return (body_inv_mass[i] == 0.0 and body_inv_inertia[i, 0] == 0.0
            and body_inv_inertia[i, 1] == 0.0 and body_inv_inertia[i, 2] == 0.0)


@helper(cache=True, error_model="numpy")
def gyroscopic_implicit(qx, qy, qz, qw, ix, iy, iz, wx, wy, wz, h):
    """One Newton step of the implicit gyroscopic update I(ω'−ω) + h ω'×Iω' = 0,
    in the body frame (Catto 2015); stable for fast spin, unlike ω×Iω explicit."""
    bx, by, bz = rotate_inv(qx, qy, qz, qw, wx, wy, wz)
    lx, ly, lz = ix * bx, iy * by, iz * bz          # I ω
    fx = h * (by * lz - bz * ly)                     # f = h ω × Iω
    fy = h * (bz * lx - bx * lz)
    fz = h * (bx * ly - by * lx)
    # Jacobian = I + h (skew(ω) I − skew(Iω))
    m00 = ix
    m01 = h * (-bz * iy + lz)
    m02 = h * (by * iz - ly)
    m10 = h * (bz * ix - lz)
    m11 = iy
    m12 = h * (-bx * iz + lx)
    m20 = h * (-by * ix + ly)
    m21 = h * (bx * iy - lx)
    m22 = iz
    det = (m00 * (m11 * m22 - m12 * m21) - m01 * (m10 * m22 - m12 * m20)
           + m02 * (m10 * m21 - m11 * m20))
    if det == 0.0 or not math.isfinite(det):
        return wx, wy, wz
    inv = 1.0 / det
    dx = inv * (fx * (m11 * m22 - m12 * m21) - m01 * (fy * m22 - m12 * fz) + m02 * (fy * m21 - m11 * fz))
    dy = inv * (m00 * (fy * m22 - m12 * fz) - fx * (m10 * m22 - m12 * m20) + m02 * (m10 * fz - fy * m20))
    dz = inv * (m00 * (m11 * fz - fy * m21) - m01 * (m10 * fz - fy * m20) + fx * (m10 * m21 - m11 * m20))
    return rotate(qx, qy, qz, qw, bx - dx, by - dy, bz - dz)


@kernel(cache=True, error_model="numpy", _nrt=False)
def integrate_velocities(bodies, body_force, body_torque, gravity, gyroscopic, h):
    """v += h (g + F/m), ω += h I⁻¹τ (world frame), then the gyroscopic term if enabled."""
    body_quat, body_vel, body_omega = bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inertia, body_inv_inertia = bodies.inv_mass, bodies.inertia, bodies.inv_inertia
    for i in range(body_vel.shape[0]):
        if is_static(body_inv_mass, body_inv_inertia, i):
            continue
        im = body_inv_mass[i]
        body_vel[i, 0] += h * (gravity[0] + im * body_force[i, 0])
        body_vel[i, 1] += h * (gravity[1] + im * body_force[i, 1])
        body_vel[i, 2] += h * (gravity[2] + im * body_force[i, 2])
        qx, qy, qz, qw = body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3]
        ax, ay, az = world_inv_inertia_times(qx, qy, qz, qw, body_inv_inertia[i, 0], body_inv_inertia[i, 1],
                                             body_inv_inertia[i, 2], body_torque[i, 0], body_torque[i, 1],
                                             body_torque[i, 2])
        wx = body_omega[i, 0] + h * ax
        wy = body_omega[i, 1] + h * ay
        wz = body_omega[i, 2] + h * az
        if gyroscopic:
            wx, wy, wz = gyroscopic_implicit(qx, qy, qz, qw, body_inertia[i, 0], body_inertia[i, 1],
                                             body_inertia[i, 2], wx, wy, wz, h)
        body_omega[i, 0] = wx
        body_omega[i, 1] = wy
        body_omega[i, 2] = wz


@helper(cache=True, error_model="numpy", _nrt=False)
def integrate_positions(bodies, h):
    """x += h v; q += h/2 (ω, 0) ⊗ q, normalized."""
    body_pos, body_quat, body_vel, body_omega = bodies.pos, bodies.quat, bodies.vel, bodies.omega
    body_inv_mass, body_inv_inertia = bodies.inv_mass, bodies.inv_inertia
    for i in range(body_pos.shape[0]):
        if is_static(body_inv_mass, body_inv_inertia, i):
            continue
        body_pos[i, 0] += h * body_vel[i, 0]
        body_pos[i, 1] += h * body_vel[i, 1]
        body_pos[i, 2] += h * body_vel[i, 2]
        qx, qy, qz, qw = integrate_quat(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                        body_omega[i, 0], body_omega[i, 1], body_omega[i, 2], h)
        body_quat[i, 0] = qx
        body_quat[i, 1] = qy
        body_quat[i, 2] = qz
        body_quat[i, 3] = qw


@helper(cache=True, error_model="numpy", _nrt=False)
def blown_up(bodies, max_speed, max_spin):
    """True if any velocity is NaN/inf or beyond the runaway bounds (m/s, rad/s)."""
    body_vel, body_omega = bodies.vel, bodies.omega
    for i in range(body_vel.shape[0]):
        v2 = body_vel[i, 0] ** 2 + body_vel[i, 1] ** 2 + body_vel[i, 2] ** 2
        w2 = body_omega[i, 0] ** 2 + body_omega[i, 1] ** 2 + body_omega[i, 2] ** 2
        if not (v2 <= max_speed * max_speed) or not (w2 <= max_spin * max_spin):
            return True
    return False


@kernel(cache=True, error_model="numpy", _nrt=False)
def gather_forces(t, bodies, loads, force_acc, torque_acc):
    """force_acc/torque_acc = the bodies' own force and torque plus every scripted load
    active at time t (t0 ≤ t < t1); a load at a body-local point adds r × F."""
    body_quat, body_force, body_torque = bodies.quat, loads.body_force, loads.body_torque
    load_body, load_force, load_torque = loads.body, loads.force, loads.torque
    load_point, load_at_point, load_window = loads.point, loads.at_point, loads.window
    for i in range(force_acc.shape[0]):     # a loop, not `force_acc[:, :] = body_force`: an array
        for c in range(3):                  # copy compiles numba's shape-mismatch message (~5 s)
            force_acc[i, c] = body_force[i, c]
            torque_acc[i, c] = body_torque[i, c]
    for k in range(load_body.shape[0]):
        if not (load_window[k, 0] <= t < load_window[k, 1]):
            continue
        i = load_body[k]
        fx, fy, fz = load_force[k, 0], load_force[k, 1], load_force[k, 2]
        force_acc[i, 0] += fx
        force_acc[i, 1] += fy
        force_acc[i, 2] += fz
        torque_acc[i, 0] += load_torque[k, 0]
        torque_acc[i, 1] += load_torque[k, 1]
        torque_acc[i, 2] += load_torque[k, 2]
        if load_at_point[k]:
            rx, ry, rz = rotate(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                load_point[k, 0], load_point[k, 1], load_point[k, 2])
            tx, ty, tz = cross(rx, ry, rz, fx, fy, fz)
            torque_acc[i, 0] += tx
            torque_acc[i, 1] += ty
            torque_acc[i, 2] += tz


@kernel(cache=True, error_model="numpy")
def body_energy(body_pos, body_quat, body_vel, body_omega, body_inv_mass, body_inertia, gravity):
    """Kinetic (½ m v² + ½ ωᵀ I ω, ω in the body frame) plus gravitational potential
    (−m g·x) energy of the dynamic bodies (J)."""
    e = 0.0
    for i in range(body_pos.shape[0]):
        if body_inv_mass[i] == 0.0:
            continue
        m = 1.0 / body_inv_mass[i]
        vx, vy, vz = body_vel[i, 0], body_vel[i, 1], body_vel[i, 2]
        bx, by, bz = rotate_inv(body_quat[i, 0], body_quat[i, 1], body_quat[i, 2], body_quat[i, 3],
                                body_omega[i, 0], body_omega[i, 1], body_omega[i, 2])
        e += 0.5 * m * (vx * vx + vy * vy + vz * vz)
        e += 0.5 * (body_inertia[i, 0] * bx * bx + body_inertia[i, 1] * by * by + body_inertia[i, 2] * bz * bz)
        e -= m * (body_pos[i, 0] * gravity[0] + body_pos[i, 1] * gravity[1] + body_pos[i, 2] * gravity[2])
    return e


@kernel(cache=True, error_model="numpy")
def body_summary(body_pos, body_vel, body_omega, body_inv_mass, speed, spin):
    """Total mass (kg), kinetic energy of translation (J) and the largest extent (m) of
    the dynamic bodies' centres; each body's speed |v| and spin |ω| into speed, spin."""
    mass = kinetic = 0.0
    lo0 = lo1 = lo2 = math.inf
    hi0 = hi1 = hi2 = -math.inf
    for i in range(body_pos.shape[0]):
        speed[i] = math.sqrt(body_vel[i, 0] ** 2 + body_vel[i, 1] ** 2 + body_vel[i, 2] ** 2)
        spin[i] = math.sqrt(body_omega[i, 0] ** 2 + body_omega[i, 1] ** 2 + body_omega[i, 2] ** 2)
        if body_inv_mass[i] == 0.0:
            continue
        m = 1.0 / body_inv_mass[i]
        mass += m
        kinetic += 0.5 * m * speed[i] * speed[i]
        lo0, hi0 = min(lo0, body_pos[i, 0]), max(hi0, body_pos[i, 0])
        lo1, hi1 = min(lo1, body_pos[i, 1]), max(hi1, body_pos[i, 1])
        lo2, hi2 = min(lo2, body_pos[i, 2]), max(hi2, body_pos[i, 2])
    extent = max(hi0 - lo0, max(hi1 - lo1, hi2 - lo2)) if mass > 0.0 else 0.0
    return mass, kinetic, extent
