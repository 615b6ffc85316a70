"""Figures and widgets, one module per experiment (notebooks call these)."""
