"""The Ropes section (seed 002): live material and discretization of each rope.

Shown only when the world has ropes (`world.ropes`, name → physics.rope.Rope); each
field goes through the rope's own validating setter.
"""
from imgui_bundle import imgui

from .params import Param

ROPE_FIELDS = (
    # attribute, label, tooltip, lo, hi, kind, unit
    ("E", "E", "Young's modulus: bending stiffness K11 = K22 = Eπr⁴/4 (Pa).", 0.0, 1e12, "float", "Pa"),
    ("G", "G", "Shear modulus: twist stiffness K33 = Gπr⁴/2 (Pa).", 0.0, 1e12, "float", "Pa"),
    ("radius", "radius", "Rope radius r: mass, inertia, stiffness and contact (m).", 1e-4, 1.0, "float", "m"),
    ("density", "density", "Density ρ (kg/m³).", 1.0, 1e5, "float", "kg/m³"),
    ("segments", "segments", "Number of segments; changing it re-discretizes the rope's current shape.",
     1, 5000, "int", ""),
    ("damping", "damping", "Kelvin-Voigt retardation time of bending and twist (s); 0 = none.",
     0.0, 10.0, "float", "s"),
)


def rope_params(name, rope):
    def make(attr, label, tip, lo, hi, kind, unit):
        return Param(f"rope.{name}.{attr}", label, tip, lambda: getattr(rope, attr),
                     lambda v: setattr(rope, attr, v), lo, hi, kind=kind, fmt="%.5g", unit=unit)
    return [make(*f) for f in ROPE_FIELDS]


def draw_ropes(widgets, ropes):
    for name, rope in ropes.items():
        imgui.push_id(f"rope.{name}")
        imgui.text(f"{name}: {rope.segments} segments, {rope.rest_length:.3f} m")
        for k, p in enumerate(rope_params(name, rope)):
            if k % 2:
                imgui.same_line(230)
            widgets.param(p, width=110)
        imgui.pop_id()
        imgui.separator()
