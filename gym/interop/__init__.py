"""egym's episodes behind the interfaces other trainers speak: each adapter is thin, over gym.episode.ToolSession.

- `ors`: the Open Reward Standard HTTP server (`egym serve-env --protocol ors`); `ors_wire`: its payloads.
"""
