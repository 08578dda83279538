"""devlint's built-in verification cases (``devlint verify`` with no targets runs them).

* :mod:`devlint.verify.cases.kda`: the Kimi Delta Attention path (torch references,
  ``gather_initial_states``, the KDA test module, fla-core's Triton kernels where a GPU is present);
* :mod:`devlint.verify.cases.kv_connector`: the ExampleConnector-style KV save/load/inject path;
* :mod:`devlint.verify.cases.shell`: the MultiConnector-style shell script, run with stub commands
  that log which device-visibility variable they received, once per vendor kind.

Each runs the devlint-fixed form of a seed file on every device and the unfixed seed file as the
case's *original*. The files they load ship in ``fixtures/`` beside this file, so the cases run
from an installed package, from any directory. They need torch, safetensors and numpy (the
``verify`` extra); fla-core and a GPU are optional (``n/a`` with the reason where absent).
"""

#: The modules ``devlint verify`` runs when given no targets, in this order.
BUILTIN_TARGETS = ("devlint.verify.cases.kda", "devlint.verify.cases.kv_connector", "devlint.verify.cases.shell")
