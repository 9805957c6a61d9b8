"""The daemon process: start and stop, the socket server, dispatch, the door, the lock, the shared state."""
