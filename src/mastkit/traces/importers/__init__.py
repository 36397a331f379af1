"""Built-in importers, one module per trace format. Each module registers itself with
:func:`mastkit.traces.registry.register`; the registry imports every module here."""
