"""What runs on its own: the schedule, the daily run, auto sleep, card reclaim, spool replay, the watchers."""
