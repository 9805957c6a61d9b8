"""Continuity: the text layouts of snapshots, events and handoffs, and their buffer mirrors."""
