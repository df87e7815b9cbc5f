"""Unknowns: goal seek, closed forms with sympy, numeric roots."""
