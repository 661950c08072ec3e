"""What the viewer draws for a body made of several pieces (a robot link from a URDF).

A body's `visual_mesh` is either one mesh file, drawn in the body frame with the body's
colour (scene files), or a tuple of `VisualPart`: each a mesh file or a primitive shape
with its own pose in the body frame, scale and colour (an empty tuple: nothing is drawn). Physics never reads these; the
renderer (render/visual_mesh.py) loads the files and bakes each part's pose into its
vertices once.
"""
from dataclasses import dataclass

MESH_SUFFIXES = (".obj", ".stl", ".dae")     # what trimesh reads for us (DAE through pycollada)


@dataclass(frozen=True)
class VisualPart:
    mesh: str = None                        # absolute path of an OBJ, STL or DAE file, or None …
    shape: object = None                    # … then a primitive of physics.shapes (Box, Sphere, Cylinder, Capsule)
    position: tuple = (0.0, 0.0, 0.0)       # in the body frame (m)
    orientation: tuple = (0.0, 0.0, 0.0, 1.0)   # quaternion (x, y, z, w), body frame
    scale: tuple = (1.0, 1.0, 1.0)          # of the mesh's own coordinates
    color: tuple = None                     # rgb 0 … 1; None: the body's colour


def is_parts(visual):
    """Whether a body's `visual_mesh` is a tuple of VisualPart (not one file path)."""
    return isinstance(visual, tuple) and all(isinstance(p, VisualPart) for p in visual)
