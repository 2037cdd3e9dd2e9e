"""The rooms of the ``Knotwork`` facade (``core``): each a group of its methods, kept apart
so the composition root stays readable. ``core.Knotwork`` inherits them all; a room reaches
the store, the settings and the few facade methods it calls through ``base.Base``."""
