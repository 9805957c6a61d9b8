"""A store's sleep: its run (learn, import, plan, apply, share), its report, and auto-share."""
