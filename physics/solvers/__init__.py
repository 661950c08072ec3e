"""Solver families over the shared constraint rows: `penalty` (seed 000), `impulse` (seed 001)."""
