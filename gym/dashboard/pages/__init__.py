"""Page handlers, one module per page family (runs, tasks, rollouts, training)."""
