"""Running work that can exhaust threads, processes or memory: isolated children with
deadlines, system limits and reserves, interrupts, the leak check.
"""
