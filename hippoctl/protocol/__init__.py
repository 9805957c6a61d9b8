"""The wire protocol shared by hippoctl and hippod: messages, framing, error codes, paths."""
