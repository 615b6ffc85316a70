"""Parameters: their declarations (default, range, unit), parameter files read with bounds,
and validation before any C runs.
"""
