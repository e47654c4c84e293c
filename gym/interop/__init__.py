"""egym's episodes behind the interfaces other trainers speak: each adapter is thin, over gym.episode.ToolSession.

- `episodes`: what every environment server holds: its tasks (TaskCatalog) and live episodes (EpisodeTable).
- `ors`: the Open Reward Standard HTTP server (`egym serve-env --protocol ors`); `ors_wire`: its payloads.
- `openenv`: an OpenEnv environment (`--protocol openenv`); `openenv_wire`: its payloads; `openenv_client`:
  the typed client, for the OpenEnv side (it imports openenv-core, not egym).
- `nemo_gym`: a NeMo Gym resources server (`--protocol nemo-gym`); `nemo_gym_wire`: its payloads.
"""
