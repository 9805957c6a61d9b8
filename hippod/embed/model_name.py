"""The name of the one embedding model hippod loads, for the code that names it without loading it."""

# all-MiniLM-L6-v2 with int8 weights (hippod/embed/minilm_model.py); the only model hippod loads.
DEFAULT_MODEL = "all-MiniLM-L6-v2:int8"
