"""The machine: its card (CPU, kernel, mitigations, limits, runtimes), what /proc and /sys
say, which CPUs a run may use.
"""
