"""velhanet: reference peers and servers for four classic turn-based game protocols.

Layers, from the inside out (see ``docs/architecture.md``):

- ``velhanet.games``: pure rules engines, no I/O, no Twisted.
- ``velhanet.bots``: players that choose moves from a game state.
- one subpackage per protocol family (wire codec, automat machines,
  Protocol/Factory classes, ``service.makeService``).
- ``twisted/plugins/velhanet_plugins.py``: twistd plugins that only wire
  command-line options to services.
"""

__version__ = "0.1.0"
