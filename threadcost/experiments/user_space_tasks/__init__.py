"""The user-space-tasks family: fibers, goroutines, Rust and Tokio tasks, Java virtual threads,
set against kernel tasks (notebook 05).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
