"""Sphinx configuration of edgereg's documentation site.

Build: ``sphinx-build -W --keep-going -b html docs docs/_build/html`` (what
``.ci/docs.sh`` runs). Markdown pages are read by myst-parser, docstrings by
autodoc + numpydoc.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document this tree, not another installed edgereg

import edgereg  # noqa: E402

project = "edgereg"
author = "the edgereg developers"
copyright = "the edgereg developers"  # noqa: A001
version = release = edgereg.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# docs/design holds derivations and study scripts for developers, not site pages;
# results.md is included by benchmarks.md (deployment.md includes a part of README.md).
exclude_patterns = ["_build", "_generated", "design", "results.md"]

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters sections say the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "alabaster"
html_title = f"edgereg {release}"
html_theme_options = {"description": "Numba online learners for edge devices"}

nitpicky = False


def _cli_help() -> None:
    """Write ``edgereg --help`` and each subcommand's help for cli.md to include."""
    from edgereg.cli import build_parser

    os.environ["COLUMNS"] = "88"
    parser = build_parser()
    out = DOCS / "_generated"
    out.mkdir(exist_ok=True)
    parts = [parser.format_help()]
    for action in parser._subparsers._group_actions:  # the subcommands, in order
        for name, sub in action.choices.items():
            parts.append(f"$ edgereg {name} --help\n{sub.format_help()}")
    (out / "cli_help.txt").write_text("\n".join(parts))


_cli_help()

_ALGORITHMS = re.compile(r"(?<![`/\w])docs/algorithms/(?:(\w+)\.md|(?=[\s).,;]))")


def _link_algorithms(app, what, name, obj, options, lines) -> None:
    """Turn a docstring's ``docs/algorithms/<page>.md`` into a link to that page."""
    for i, line in enumerate(lines):
        lines[i] = _ALGORITHMS.sub(
            lambda m: f":doc:`docs/algorithms/{m.group(1) + '.md' if m.group(1) else ''} "
            f"</algorithms/{m.group(1) or 'index'}>`",
            line,
        )


def _class_signature(app, what, name, obj, options, signature, return_annotation):
    """Show a model's constructor arguments, not the ``*args, **kwargs`` of
    ``OnlineModel.__new__`` (which only routes ``forgetting="auto"``)."""
    if what != "class" or signature != "(*args, **kwargs)" or "__init__" not in vars(obj):
        return None
    sig = inspect.signature(obj.__init__)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params[1:], return_annotation=inspect.Signature.empty)), None


def setup(app) -> None:
    app.connect("autodoc-process-docstring", _link_algorithms)
    app.connect("autodoc-process-signature", _class_signature)
