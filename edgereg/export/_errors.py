"""The exporter's one exception, apart so that its submodules raise it without
importing the package (whose __init__ imports them)."""


class ExportError(RuntimeError):
    """The export cannot be made (versions, target, model, or the symbol check)."""
