"""Names the dead-code checker (vulture, `make lint`) cannot see used: each is read or
called by a framework, by name, never by this project's code. Only such names belong
here (what nothing calls is removed); decorators that register a function are listed
in pyproject.toml's [tool.vulture] ignore_decorators. This file is never run."""

# cffi: fields of C structs the kernels read (native/tc_brigade.h, native/tc_switch.h,
# native/tc_readiness.h: its test hooks)
_.raise_hard_nofile
_.working_set_bytes
_.test_stall
_.test_uring_errno

# tqdm reads its bar's start time (threadcost/cli.py: the command's time, not the line's)
_.start_t

# jupyter_client's kernel manager reads where to put its connection file and sockets
_.connection_file
_.ip

# nbconvert's HTMLExporter options (threadcost/paper/render.py)
_.require_js_url
_.mathjax_url
_.exclude_input_prompt
_.exclude_output_prompt

# reprlib.Repr's limits (threadcost/settings/parameter_input.py)
_.maxlevel
_.maxdict
_.maxlist
_.maxset
_.maxtuple
_.maxother
_.maxstring

# IPython's rich display protocol (threadcost/notebook/plotting.py)
_._ipython_display_

# html.parser.HTMLParser's callbacks (tests/test_untrusted_data.py)
_.handle_starttag
_.handle_endtag
_.handle_data

# called from the notebook cells threadcost/notebook/stored.py rewrites (named in the AST)
_report
_show_last
_unmade

# dataclass fields written out by dataclasses.asdict / the results' JSON
# (threadcost/stats.py's fit, the claims' context rows in `threadcost claims --json`)
_.slope_stderr
_.yardstick_ratio
_.normalised_ratio

# a fixture requested by argument for its side effect (tests/test_limit_refusal.py)
busy_core

# a notebook parameter papermill sets by name (declared in threadcost/experiments/parameters.py)
claims_include_reference

# multiprocessing's forkserver state, reset by name (threadcost/runsafety/isolate.py)
_._forkserver_address

# threadcost/runsafety/ is another change's to edit: dead there, left to it
# (syslimits.is_reserve; leakcheck.Mapping.perms, a parsed /proc/<pid>/maps column)
is_reserve
_.perms

# read inside the programs tests start in a subprocess (their source is a string)
PALETTE  # tests/test_plotting.py's probe: seaborn's theme with the paper's palette
drive  # tests/test_every_folder_renders.py: one IPython shell over every folder

# tarfile writes a member's header from its TarInfo fields (threadcost/store/archive.py:
# an archive names no owner); the tests build hostile members the same way
_.gid
_.linkname
_.pax_headers

# io.RawIOBase calls these on the bounded stream a gzip archive is read through
# (threadcost/store/archive.py)
_.readable
_.readinto
