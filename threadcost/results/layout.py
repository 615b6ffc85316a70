"""What a run folder holds, by name: one file per table (``<table>.csv``, or
``<table>.csv.gz`` when large), then ``meta.json``, which describes the run and its
tables (its format's version: :data:`SCHEMA_VERSION`)."""

from __future__ import annotations

META = "meta.json"  # a run folder's description, written after its tables
SCHEMA_VERSION = 1  # of meta.json
# A table whose CSV text is larger than this is stored as <table>.csv.gz.
GZIP_ABOVE_BYTES = 256 * 1024
# The files a table may be stored as (reading accepts either, so older runs load).
TABLE_SUFFIXES = (".csv", ".csv.gz")
