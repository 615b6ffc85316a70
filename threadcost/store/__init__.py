"""Stored runs: where runs live, reading them safely, checking their tables, the notebooks'
door to them (measure and store, or read back), the committed reference and moving old
layouts.
"""
