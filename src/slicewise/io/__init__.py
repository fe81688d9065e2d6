"""Readers that turn evaluation-harness logs into slicewise item tables.

* :func:`read_inspect` reads Inspect (``inspect_ai``) ``.eval`` and ``.json`` logs,
* :func:`read_lm_eval` reads lm-evaluation-harness ``samples_<task>_<date>.jsonl`` files,
* :func:`read_helm` reads HELM ``per_instance_stats.json`` files,
* :func:`read_logs` dispatches on the kind of log and :func:`import_logs` writes the result
  to Parquet, CSV or JSON Lines (the ``slicewise import`` command),
* :func:`build_item_table` joins a gold-label source with cheap-signal sources on the item
  id into one item table,
* :func:`add_grades` adds a column of gold grades to an item table by key (the
  ``slicewise join`` command).

None of them needs the harnesses installed. Unusual but readable content (errored samples,
missing scores, dropped perturbations) is reported with :class:`LogReadWarning`.

Example
-------
>>> from slicewise.io import build_item_table, read_lm_eval
>>> runs = read_lm_eval("out/", filter="strict-match")  # doctest: +SKIP
"""

from slicewise.io._common import LogReadWarning
from slicewise.io.helm import read_helm
from slicewise.io.inspect_logs import inspect_value_to_float, read_inspect
from slicewise.io.join import SignalSource, add_grades, build_item_table
from slicewise.io.lm_eval import read_lm_eval
from slicewise.io.readers import LOG_KINDS, LogKind, import_logs, read_logs

__all__ = [
    "LOG_KINDS",
    "LogKind",
    "LogReadWarning",
    "SignalSource",
    "add_grades",
    "build_item_table",
    "import_logs",
    "inspect_value_to_float",
    "read_helm",
    "read_inspect",
    "read_lm_eval",
    "read_logs",
]
