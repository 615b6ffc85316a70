"""The malloc-touch family: allocate memory, touch it page by page, watch VSZ and RSS (notebook 01).

Its experiments, tables, parameters and figures are declared in :mod:`.spec`; the
modules beside it run them."""
